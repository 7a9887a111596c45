//! The deterministic local normaliser: task text -> canonical action, target kinds, typed
//! parameters and a wording skeleton. No network, no model, same input -> same output.
//!
//! The primary target kind is the first kind-bearing word after the action (a kind noun, or a
//! masked value that implies one, e.g. a package implies `dependency`); it goes into the key.

use super::lexicon;
use super::params::{self, Param};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// What the normaliser made of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Normalised {
    /// Canonical action (`fix`, `add`, `remove`, `update`...), or `none`.
    pub action: String,
    /// The primary target kind (`flag`, `dependency`, `test`...), or `none`.
    pub kind: String,
    /// Every target kind mentioned, sorted.
    pub kinds: Vec<String>,
    /// Typed values, in order of appearance.
    pub params: Vec<Param>,
    /// Content words with values masked, verbs and nouns canonicalised (for wording similarity).
    pub skeleton: Vec<String>,
}

const NONE: &str = "none";
/// The kind of an unnamed object (`remove rand from <path>`): the path is only where.
const OBJECT: &str = "object";

/// Normalises a task.
pub fn normalise(task: &str) -> Normalised {
    let (params, masked) = params::extract(task);
    let lower = masked.to_lowercase();
    let words: Vec<String> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '!' | '?' | '(' | ')' | '"' | '.'))
        .map(|w| w.trim_matches(|c: char| c == '\'' || c == '`' || c == '*'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let (mut action, verb_at, verb_len) = find_action(&words);
    let mut kinds = Vec::new();
    let mut primary: Option<String> = None;
    let mut skeleton = Vec::new();
    let mut unknown_object = false;
    let mut placeholder = 0;
    let mut i = 0;
    while i < words.len() {
        if verb_at == Some(i) {
            skeleton.push(format!("@{action}"));
            i += verb_len;
            continue;
        }
        let after_verb = verb_at.is_none_or(|v| i > v);
        let is_placeholder = words[i].starts_with('<');
        let (mut kind, mut len) = kind_at(&words, i);
        if is_placeholder {
            // A bare name yields to the kind noun right after it: "the `x` subcommand".
            if kind == Some("symbol")
                && i + 1 < words.len()
                && !words[i + 1].starts_with('<')
                && let (Some(k), l) = kind_at(&words, i + 1)
            {
                kind = Some(k);
                len += l;
            }
            // A location ("from <path>") after an unknown object is not what the task acts on.
            let located = params.get(placeholder).is_some_and(|p| p.role.is_some());
            placeholder += 1;
            if located && unknown_object && primary.is_none() && after_verb {
                primary = Some(OBJECT.to_string());
            }
        }
        if let Some(k) = kind {
            if !kinds.iter().any(|x: &String| x == k) {
                kinds.push(k.to_string());
            }
            if primary.is_none() && after_verb {
                primary = Some(k.to_string());
            }
            skeleton.push(format!("#{k}"));
            i += len;
            continue;
        }
        let w = &words[i];
        if !lexicon::STOPWORDS.contains(&w.as_str()) {
            if after_verb && primary.is_none() && !is_placeholder && lexicon::verb(w).is_none() {
                unknown_object = true;
            }
            skeleton.push(lexicon::verb(w).map(|a| format!("@{a}")).unwrap_or_else(|| w.clone()));
        }
        i += 1;
    }
    // "add docs to `x`" is "document `x`": the kind after the docs is what is acted on.
    if action == "add" && primary.as_deref() == Some("docs") {
        action = "document";
        primary = kinds.iter().find(|k| *k != "docs").cloned();
    }
    let kind = primary.or_else(|| kinds.first().cloned()).unwrap_or_else(|| NONE.to_string());
    kinds.sort();
    Normalised { action: action.to_string(), kind, kinds, params, skeleton }
}

/// The first action in the words: a phrase or verb anywhere, except noun-like verbs, which count
/// only as the first word after polite prefixes. Returns (action, position, words consumed).
fn find_action(words: &[String]) -> (&'static str, Option<usize>, usize) {
    let skip = |from: usize| {
        words.iter().skip(from).position(|w| !lexicon::POLITE.contains(&w.as_str())).map_or(words.len(), |p| p + from)
    };
    let mut start = skip(0);
    // "In <path>, add ...": a leading location does not take the sentence-start slot.
    if words.get(start).is_some_and(|w| matches!(w.as_str(), "in" | "inside" | "within" | "for" | "at" | "on"))
        && words.get(start + 1).is_some_and(|w| w.starts_with('<'))
    {
        start = skip(start + 2);
    }
    for i in start..words.len() {
        for (phrase, action) in lexicon::PHRASES {
            let parts: Vec<&str> = phrase.split(' ').collect();
            if words.len() >= i + parts.len() && parts.iter().zip(&words[i..]).all(|(p, w)| p == w) {
                return (action, Some(i), parts.len());
            }
        }
        let w = words[i].as_str();
        if w.starts_with('<') {
            continue;
        }
        if w == "make" || w == "get" {
            let window = &words[i + 1..words.len().min(i + 8)];
            if window
                .iter()
                .any(|x| matches!(x.as_str(), "pass" | "work" | "green" | "compile" | "compiles" | "passing"))
            {
                return ("fix", Some(i), 1);
            }
            continue;
        }
        if let Some(action) = lexicon::verb(w)
            && (i == start || !lexicon::is_noun_verb(w) || follows_modal(words, i))
        {
            return (action, Some(i), 1);
        }
    }
    if words.get(start).is_some_and(|w| matches!(w.as_str(), "what" | "how" | "why" | "where" | "which" | "who")) {
        return ("explain", None, 0);
    }
    (NONE, None, 0)
}

/// "should be renamed", "needs to be updated": a noun-like verb after a modal still is the action.
fn follows_modal(words: &[String], i: usize) -> bool {
    i >= 1 && matches!(words[i - 1].as_str(), "be" | "to" | "been" | "please" | "and" | "then")
}

/// The kind at position `i`: a masked value, a two-word kind, or a one-word kind.
fn kind_at(words: &[String], i: usize) -> (Option<&'static str>, usize) {
    let w = words[i].as_str();
    if let Some(name) = w.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        let kind = [
            params::ParamKind::Path,
            params::ParamKind::Identifier,
            params::ParamKind::Flag,
            params::ParamKind::Url,
            params::ParamKind::Issue,
            params::ParamKind::Pr,
            params::ParamKind::Package,
        ]
        .into_iter()
        .find(|k| k.name() == name)
        .and_then(|k| k.implied_kind());
        return (kind, 1);
    }
    if let Some(next) = words.get(i + 1)
        && let Some(k) = lexicon::kind(&format!("{w} {next}"))
    {
        return (Some(k), 2);
    }
    (lexicon::kind(w), 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("bump serde to 1.0.200 in Cargo.toml", "update", "dependency")]
    #[case("Please upgrade the tokio crate to 1.41", "update", "dependency")]
    #[case("remove tokio from the dependencies", "remove", "dependency")]
    #[case("add a flag `--verbose` to src/main.rs", "add", "flag")]
    #[case("In src/main.rs, add a --verbose option", "add", "flag")]
    #[case("Could you implement a `--dry-run` switch?", "add", "flag")]
    #[case("rename `parse_args` to `parse_cli`", "rename", "symbol")]
    #[case("`parse_args` should be renamed to `parse_cli`", "rename", "symbol")]
    #[case("rename the function `a` to `b`", "rename", "function")]
    #[case("add a unit test for `parse`", "add", "test")]
    #[case("write tests covering `parse` in src/lib.rs", "add", "test")]
    #[case("test `parse`", "test", "symbol")]
    #[case("fix the failing test `it_parses`", "fix", "test")]
    #[case("make the failing test `it_parses` pass", "fix", "test")]
    #[case("fix issue #12", "fix", "issue")]
    #[case("get rid of the `--legacy` flag", "remove", "flag")]
    #[case("what does `Store::open` do?", "explain", "symbol")]
    #[case("the weather is nice", "none", "none")]
    #[case("add the environment variable `normalize_path` to crates/core/src/db.rs", "add", "env")]
    #[case("remove rand from cmd/server/main.go", "remove", "object")]
    #[case("add a docstring to `f` in src/a.rs", "document", "symbol")]
    #[case("In src/a.rs, set the timeout to 7", "update", "timeout")]
    #[case("implement a `x` subcommand in src/cli.rs", "add", "command")]
    fn actions_and_kinds(#[case] task: &str, #[case] action: &str, #[case] kind: &str) {
        let n = normalise(task);
        assert_eq!((n.action.as_str(), n.kind.as_str()), (action, kind), "{task}: {n:?}");
    }

    #[test]
    fn skeleton_masks_values_and_canonicalises_words() {
        let n = normalise("Bump serde to 1.0.200 in Cargo.toml");
        assert!(n.skeleton.contains(&"@update".to_string()));
        assert!(!n.skeleton.iter().any(|w| w.contains("serde") || w.contains("1.0")), "{:?}", n.skeleton);
    }

    #[test]
    fn normalising_is_deterministic() {
        let t = "In src/main.rs, add a --verbose option and test it";
        assert_eq!(normalise(t), normalise(t));
    }

    mod props {
        use super::*;
        use crate::plan::key::IntentKey;
        use proptest::prelude::*;

        /// Task shapes with value holes: `{f}` a flag name, `{p}` a file, `{s}` a symbol.
        const SHAPES: &[&str] = &[
            "add a `--{f}` flag to {p}",
            "In {p}, add a --{f} option",
            "remove the `--{f}` flag from {p}",
            "rename `{s}` to `{s}_v2`",
            "add a unit test for `{s}` in {p}",
            "fix the failing test `{s}`",
        ];

        fn task(shape: &str, f: &str, p: &str, s: &str) -> String {
            shape.replace("{f}", f).replace("{p}", p).replace("{s}", s)
        }

        proptest! {
            /// The bucket key depends on what a task asks, never on its values: two tasks of the
            /// same shape with other flag names, paths and symbols share a key and a skeleton.
            #[test]
            fn values_never_change_the_key(
                shape in prop::sample::select(SHAPES),
                a in ("[a-z][a-z0-9]{1,9}", "(src|lib|crates/x)/[a-z]{1,8}\\.(rs|go|py)", "[a-z][a-z_]{2,10}"),
                b in ("[a-z][a-z0-9]{1,9}", "(src|lib|crates/x)/[a-z]{1,8}\\.(rs|go|py)", "[a-z][a-z_]{2,10}"),
            ) {
                let na = normalise(&task(shape, &a.0, &a.1, &a.2));
                let nb = normalise(&task(shape, &b.0, &b.1, &b.2));
                prop_assert_eq!(IntentKey::of(&na).bucket, IntentKey::of(&nb).bucket);
                prop_assert_eq!(&na.skeleton, &nb.skeleton);
                prop_assert_eq!(na.params.len(), nb.params.len());
            }

            /// Whitespace and case around the words do not change what a task means.
            #[test]
            fn spacing_and_case_do_not_change_the_key(shape in prop::sample::select(SHAPES), f in "[a-z]{2,8}") {
                let t = task(shape, &f, "src/main.rs", "parse_args");
                let spaced = format!("  {}  ", t.replace(' ', "   "));
                let upper: String = t.chars().enumerate().map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c }).collect();
                let key = IntentKey::of(&normalise(&t)).bucket;
                prop_assert_eq!(&key, &IntentKey::of(&normalise(&spaced)).bucket);
                prop_assert_eq!(&key, &IntentKey::of(&normalise(&upper)).bucket);
            }
        }
    }
}
