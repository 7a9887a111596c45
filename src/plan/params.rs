//! Typed values in a task's text: URLs, backticked identifiers, quoted strings, issue and PR
//! numbers, dates, versions, CLI flags, paths, numbers, and package names after dependency verbs.
//!
//! Each match is masked in a skeleton (`<flag>`, `<path>`...) so the rest of the normaliser sees
//! only structure. Values never reach the bucket key.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// The type of an extracted value (also the type a template slot declares).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// A file or directory path.
    Path,
    /// A name in backticks (function, type, variable...).
    Identifier,
    /// A command-line flag such as `--verbose`.
    Flag,
    /// A number.
    Number,
    /// A version such as `1.0.200`.
    Version,
    /// A date `YYYY-MM-DD`.
    Date,
    /// An http(s) URL.
    Url,
    /// A quoted string or a code snippet.
    String,
    /// An issue number (`#42`).
    Issue,
    /// A pull request number (`PR #42`).
    Pr,
    /// A package or crate name after a dependency verb.
    Package,
    /// Any value (templates only).
    Any,
}

impl ParamKind {
    /// The snake_case name (also the base name of parsed parameters).
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Path => "path",
            ParamKind::Identifier => "identifier",
            ParamKind::Flag => "flag",
            ParamKind::Number => "number",
            ParamKind::Version => "version",
            ParamKind::Date => "date",
            ParamKind::Url => "url",
            ParamKind::String => "string",
            ParamKind::Issue => "issue",
            ParamKind::Pr => "pr",
            ParamKind::Package => "package",
            ParamKind::Any => "any",
        }
    }

    /// The target kind a value of this type implies when the text names none.
    pub fn implied_kind(self) -> Option<&'static str> {
        match self {
            ParamKind::Path => Some("file"),
            ParamKind::Identifier => Some("symbol"),
            ParamKind::Flag => Some("flag"),
            ParamKind::Url => Some("url"),
            ParamKind::Issue => Some("issue"),
            ParamKind::Pr => Some("pr"),
            ParamKind::Package => Some("dependency"),
            _ => None,
        }
    }

    /// Whether `value` has the shape of this type.
    pub fn accepts(self, value: &str) -> bool {
        let v = value.trim();
        match self {
            ParamKind::Any | ParamKind::String => !v.is_empty(),
            ParamKind::Path => !v.is_empty() && !v.contains(char::is_whitespace),
            ParamKind::Identifier => IDENT_RE.is_match(v),
            ParamKind::Flag => FLAG_ONLY_RE.is_match(v),
            ParamKind::Number => v.parse::<f64>().is_ok(),
            ParamKind::Version => VERSION_ONLY_RE.is_match(v),
            ParamKind::Date => DATE_ONLY_RE.is_match(v),
            ParamKind::Url => v.starts_with("http://") || v.starts_with("https://"),
            ParamKind::Issue | ParamKind::Pr => v.trim_start_matches('#').parse::<u64>().is_ok(),
            ParamKind::Package => PACKAGE_ONLY_RE.is_match(v),
        }
    }
}

/// Where a value sits in the sentence: after "to"/"as", after "from", after "in"/"at", or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// After "to", "into" or "as" (the new value).
    To,
    /// After "from" (the old value).
    From,
    /// After "in", "at", "inside", "under" or "of" (the location).
    In,
}

/// One typed value found in the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Param {
    /// Its type.
    pub kind: ParamKind,
    /// The value as written (without backticks or quotes).
    pub value: String,
    /// Its role in the sentence, when a preposition tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

crate::pattern_table! { pub PATTERNS in "params";
    URL_RE = r#"https?://[^\s<>`"')\]]+"#,
        "see https://example.com/x";
    BACKTICK_RE = r"`([^`\n]+)`",
        "rename `run_server`";
    DQUOTE_RE = r#""([^"\n]+)""#,
        "say \"hello there\"";
    SQUOTE_RE = r"(?:^|\s)'([^'\n]+)'(?:$|[\s.,;:!?])",
        "say 'hello' now";
    PR_RE = r"(?i)\b(?:pr|pull request|merge request|mr)\s*#?\s*(\d+)\b",
        "review PR #42";
    ISSUE_RE = r"(?i)(?:\b(?:issue|ticket|bug)\s*#?\s*(\d+)\b|#(\d+)\b)",
        "fix issue 12";
    DATE_RE = r"\b(\d{4}-\d{2}-\d{2})\b",
        "since 2024-05-01";
    VERSION_RE = r"(?:^|[\s@=(])(v?\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?)\b",
        "bump to 1.10.2";
    FLAG_RE = r"(?:^|[\s(\[])(--?[A-Za-z][A-Za-z0-9-]*)(?:=\S+)?",
        "add a --verbose flag";
    PATH_RE = r"(?i)(?:^|[\s(\[])((?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]*)*|(?:\.{0,2}/)?(?:[\w.@-]+/)+[\w.@-]*|(?:[\w-]+(?:\.[\w-]+)*\.(?:rs|toml|json|ya?ml|md|txt|py|js|mjs|cjs|ts|tsx|jsx|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|sql|lock|cfg|ini|env|html|css|scss|vue|svelte|swift|proto|graphql|xml|gradle|mod|sum|csv|tsv|lua|ex|exs|zig|tf|log|conf|gz|bz2|xz|zst|zip|tar|tgz|img|iso|pdf|png|jpe?g|gif|svg|webp|mp3|mp4|wav|bak|tmp|db|sqlite|pem|crt|jar|whl|deb|rpm|ipynb|parquet)|Dockerfile|Makefile|Justfile|Cargo\.toml)\b)",
        "edit src/main.rs";
    NUMBER_RE = r"(?:^|[\s(=])(\d+(?:\.\d+)?)\b",
        "older than 30 days";
    IDENT_RE = r"^[A-Za-z_][A-Za-z0-9_:.<>!?-]*(?:\(\))?$",
        "run_server";
    FLAG_ONLY_RE = r"^--?[A-Za-z][A-Za-z0-9-]*(?:=\S+)?$",
        "--verbose";
    VERSION_ONLY_RE = r"^[v^~=<>]*\d+(?:\.\d+){0,3}(?:-[0-9A-Za-z.]+)?$",
        "v1.2.3";
    DATE_ONLY_RE = r"^\d{4}-\d{2}-\d{2}$",
        "2024-05-01";
    PACKAGE_ONLY_RE = r"^@?[A-Za-z0-9][A-Za-z0-9_.@/-]*$",
        "@types/node";
    PACKAGE_AFTER_VERB_RE = r"(?i)\b(?:bump|bumping|raise|raising|upgrade|upgrading|update|updating|downgrade|downgrading|pin|pinning|add|adding|remove|removing|drop|dropping|install|installing|uninstall|uninstalling|delete|deleting|replace|replacing)\s+(?:the\s+)?(?:(?:dependency|dep|crate|package|library|gem|module)\s+)?(@?[a-z][a-z0-9_.@/-]*)",
        "bump serde to 1.0.200";
    PACKAGE_BEFORE_NOUN_RE = r"(?i)\b(@?[a-z][a-z0-9_.@/-]*)\s+(?:dependency|dep|crate|package|library|gem)\b",
        "the serde dependency";
    DEP_WORD_RE = r"(?i)\b(?:dependency|dependencies|dep|deps|crate|crates|package|packages|library|libraries|gem|gems)\b",
        "add a dependency";
    INSTALL_RE = r"(?i)\b(?:install|uninstall|bump|upgrade|downgrade|pin)\w*\b",
        "install ripgrep";
}

/// Words that are never package names.
const NOT_PACKAGES: &[&str] = &[
    "a",
    "an",
    "the",
    "to",
    "new",
    "all",
    "our",
    "my",
    "this",
    "that",
    "it",
    "its",
    "dependency",
    "dependencies",
    "dep",
    "deps",
    "crate",
    "crates",
    "package",
    "packages",
    "library",
    "libraries",
    "version",
    "versions",
    "support",
    "from",
    "in",
    "of",
    "for",
    "with",
    "and",
    "some",
    "one",
    "another",
    "unused",
    "outdated",
    "old",
    "latest",
    "every",
    "each",
    "gem",
    "module",
    "on",
    "as",
    "test",
    "tests",
    "flag",
    "option",
    "file",
    "function",
    "lockfile",
    "minimum",
    "workspace",
];

/// A typed value and where it sits in the text (byte offsets of the whole match, quotes and
/// backticks included).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Its type.
    pub kind: ParamKind,
    /// The value as written (without backticks or quotes).
    pub value: String,
}

/// The values found in `text`, in order of appearance, and the text with each value masked.
pub fn extract(text: &str) -> (Vec<Param>, String) {
    let found = spans(text);
    let mut params = Vec::with_capacity(found.len());
    let mut skeleton = String::with_capacity(text.len());
    let mut at = 0;
    for Span { start, end, kind, value } in found {
        skeleton.push_str(&text[at..start]);
        let role = role_before(&text[..start]);
        skeleton.push_str(&format!(" <{}> ", kind.name()));
        params.push(Param { kind, value, role });
        at = end;
    }
    skeleton.push_str(&text[at..]);
    (params, skeleton)
}

/// The typed values the tables find in `text`, in order of appearance, never overlapping.
pub fn spans(text: &str) -> Vec<Span> {
    let mut found: Vec<(usize, usize, ParamKind, String)> = Vec::new();
    let mut masked = vec![false; text.len()];
    let mut take = |found: &mut Vec<_>, start: usize, end: usize, kind: ParamKind, value: &str| {
        if value.trim().is_empty() || masked[start..end].iter().any(|m| *m) {
            return;
        }
        masked[start..end].iter_mut().for_each(|m| *m = true);
        found.push((start, end, kind, value.trim().to_string()));
    };
    for m in URL_RE.find_iter(text) {
        let v = m.as_str().trim_end_matches(['.', ',', ';', ':']);
        take(&mut found, m.start(), m.start() + v.len(), ParamKind::Url, v);
    }
    for c in BACKTICK_RE.captures_iter(text) {
        let (Some(all), Some(inner)) = (c.get(0), c.get(1)) else {
            continue;
        };
        take(&mut found, all.start(), all.end(), classify_code(inner.as_str()), inner.as_str());
    }
    for re in [&*DQUOTE_RE, &*SQUOTE_RE] {
        for c in re.captures_iter(text) {
            let Some(inner) = c.get(1) else { continue };
            take(&mut found, inner.start() - 1, inner.end() + 1, ParamKind::String, inner.as_str());
        }
    }
    for (re, kind) in [(&*PR_RE, ParamKind::Pr), (&*ISSUE_RE, ParamKind::Issue)] {
        for c in re.captures_iter(text) {
            let (Some(all), Some(num)) = (c.get(0), c.get(1).or_else(|| c.get(2))) else {
                continue;
            };
            // Inside a flag or a hyphenated word (`--mr0`, `fix-pr2`) it is no reference.
            if text[..all.start()].ends_with(|ch: char| ch == '-' || ch == '_' || ch.is_alphanumeric()) {
                continue;
            }
            take(&mut found, all.start(), all.end(), kind, num.as_str());
        }
    }
    for (re, kind) in [
        (&*DATE_RE, ParamKind::Date),
        (&*VERSION_RE, ParamKind::Version),
        (&*FLAG_RE, ParamKind::Flag),
        (&*PATH_RE, ParamKind::Path),
        (&*NUMBER_RE, ParamKind::Number),
    ] {
        for c in re.captures_iter(text) {
            let Some(g) = c.get(1) else { continue };
            let v = if kind == ParamKind::Path { g.as_str().trim_end_matches(['.', ',']) } else { g.as_str() };
            if kind == ParamKind::Path && (v == "/" || v.is_empty()) {
                continue;
            }
            take(&mut found, g.start(), g.start() + v.len(), kind, v);
        }
    }
    packages(text, &mut found, &mut take);
    found.sort_by_key(|f| f.0);
    found.into_iter().map(|(start, end, kind, value)| Span { start, end, kind, value }).collect()
}

type Found = Vec<(usize, usize, ParamKind, String)>;

/// Package names: after a dependency verb (when the text speaks of dependencies, a version, or
/// the verb is install/bump/upgrade), or right before "crate"/"package"/"dependency".
fn packages(text: &str, found: &mut Found, take: &mut impl FnMut(&mut Found, usize, usize, ParamKind, &str)) {
    let versioned = found.iter().any(|f| f.2 == ParamKind::Version);
    // Judge the wording without the values already found ("crates/core/x.rs" is not about crates).
    let mut bare = text.as_bytes().to_vec();
    for f in found.iter() {
        bare[f.0..f.1].iter_mut().for_each(|b| *b = b' ');
    }
    let bare = String::from_utf8_lossy(&bare);
    let speaks_of_deps = DEP_WORD_RE.is_match(&bare) || INSTALL_RE.is_match(&bare) || versioned;
    if !speaks_of_deps {
        return;
    }
    for re in [&*PACKAGE_AFTER_VERB_RE, &*PACKAGE_BEFORE_NOUN_RE] {
        for c in re.captures_iter(text) {
            let Some(g) = c.get(1) else { continue };
            let word = g.as_str().trim_end_matches(['.', ',', ';', ':']);
            let lower = word.to_lowercase();
            if NOT_PACKAGES.contains(&lower.as_str())
                || super::lexicon::kind(&lower).is_some()
                || super::lexicon::verb(&lower).is_some()
            {
                continue;
            }
            take(found, g.start(), g.start() + word.len(), ParamKind::Package, word);
        }
    }
}

/// A backticked snippet's type: a flag, a path, an identifier, or code (a string).
fn classify_code(s: &str) -> ParamKind {
    let s = s.trim();
    if FLAG_ONLY_RE.is_match(s) {
        ParamKind::Flag
    } else if PATH_RE.find(s).is_some_and(|m| m.as_str().trim() == s)
        && (s.contains('/') || s.contains('.'))
        && !s.contains("::")
    {
        ParamKind::Path
    } else if IDENT_RE.is_match(s) {
        ParamKind::Identifier
    } else {
        ParamKind::String
    }
}

/// The preposition before a value, looking past articles and kind nouns ("to the struct `x`").
pub fn role_before(prefix: &str) -> Option<Role> {
    for word in prefix.split_whitespace().rev().take(4) {
        let w = word.to_lowercase();
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        match w {
            "to" | "into" | "as" | "with" => return Some(Role::To),
            "from" => return Some(Role::From),
            "in" | "at" | "inside" | "under" | "of" | "within" => return Some(Role::In),
            "the" | "a" | "an" | "new" => continue,
            _ if super::lexicon::kind(w).is_some() => continue,
            _ => return None,
        }
    }
    None
}

/// The placeholder a value of this type becomes.
pub fn placeholder(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Path => "<path>",
        ParamKind::Identifier | ParamKind::Package => "<name>",
        ParamKind::Flag => "<flag>",
        ParamKind::Number => "<number>",
        ParamKind::Version => "<version>",
        ParamKind::Date => "<date>",
        ParamKind::Url => "<url>",
        ParamKind::String => "<string>",
        ParamKind::Issue => "<issue>",
        ParamKind::Pr => "<pr>",
        ParamKind::Any => "<value>",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn every_pattern_compiles_and_catches_its_own_sample() {
        assert_eq!(crate::patterns::check_all(PATTERNS.iter().copied()).unwrap(), PATTERNS.len());
    }

    fn kinds(text: &str) -> Vec<(ParamKind, String)> {
        extract(text).0.into_iter().map(|p| (p.kind, p.value)).collect()
    }

    #[rstest]
    #[case("bump serde to 1.0.200 in Cargo.toml", vec![(ParamKind::Package, "serde"), (ParamKind::Version, "1.0.200"), (ParamKind::Path, "Cargo.toml")])]
    #[case("add a flag `--verbose` to src/main.rs", vec![(ParamKind::Flag, "--verbose"), (ParamKind::Path, "src/main.rs")])]
    #[case("add --dry-run to the CLI", vec![(ParamKind::Flag, "--dry-run")])]
    #[case("rename `parse_args` to `parse_cli`", vec![(ParamKind::Identifier, "parse_args"), (ParamKind::Identifier, "parse_cli")])]
    #[case("fix issue #42", vec![(ParamKind::Issue, "42")])]
    #[case("review PR #7 before 2024-05-01", vec![(ParamKind::Pr, "7"), (ParamKind::Date, "2024-05-01")])]
    // Regression (found by the normaliser property test): a flag named like a reference.
    #[case("add a --mr0 option", vec![(ParamKind::Flag, "--mr0")])]
    #[case("add a --issue2 flag", vec![(ParamKind::Flag, "--issue2")])]
    #[case("fetch https://example.com/a.json, then parse it", vec![(ParamKind::Url, "https://example.com/a.json")])]
    #[case("set the timeout to 30 seconds", vec![(ParamKind::Number, "30")])]
    #[case(r#"change the greeting to "hello world""#, vec![(ParamKind::String, "hello world")])]
    #[case("add the tokio crate", vec![(ParamKind::Package, "tokio")])]
    #[case("add logging to the server", vec![])]
    #[case("move `src/a.rs` to src/b/", vec![(ParamKind::Path, "src/a.rs"), (ParamKind::Path, "src/b/")])]
    // Absolute, home and dot paths of one segment are paths too.
    #[case("clean up /tmp.", vec![(ParamKind::Path, "/tmp")])]
    #[case("copy ~/notes to ./backup", vec![(ParamKind::Path, "~/notes"), (ParamKind::Path, "./backup")])]
    #[case("list /var/log/nginx and /etc", vec![(ParamKind::Path, "/var/log/nginx"), (ParamKind::Path, "/etc")])]
    #[case("pick one of red / green", vec![])]
    fn values_are_typed(#[case] text: &str, #[case] want: Vec<(ParamKind, &str)>) {
        let want: Vec<(ParamKind, String)> = want.into_iter().map(|(k, v)| (k, v.to_string())).collect();
        assert_eq!(kinds(text), want, "{text}");
    }

    #[test]
    fn roles_come_from_prepositions() {
        let (p, skeleton) = extract("rename `a` to `b`");
        assert_eq!(p[0].role, None);
        assert_eq!(p[1].role, Some(Role::To));
        assert!(skeleton.contains("<identifier>") && !skeleton.contains('`'));
    }

    #[rstest]
    #[case(ParamKind::Flag, "--x", true)]
    #[case(ParamKind::Flag, "x", false)]
    #[case(ParamKind::Version, "1.2.3", true)]
    #[case(ParamKind::Version, "latest", false)]
    #[case(ParamKind::Number, "12", true)]
    #[case(ParamKind::Identifier, "foo bar", false)]
    fn types_accept_their_shapes(#[case] kind: ParamKind, #[case] v: &str, #[case] ok: bool) {
        assert_eq!(kind.accepts(v), ok);
    }
}
