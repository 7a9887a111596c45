//! Values the typed tables cannot see: names written without backticks and numbers glued to a
//! unit or a sign. A word is a name by its shape (`run_server`, `parseArgs`, `HttpClient`,
//! `os.path`, `$HOME`, `sha256`) or by where it stands: after or before a naming noun ("fn
//! main", "the regex crate", "a dependency on regex"), right before a version ("serde 1.0.200"),
//! after "to" following another name ("rename fn run_server to serve"), or capitalised inside a
//! sentence ("switch from Postgres to MySQL").
//!
//! These are features for masking, never gates: a word they miss stays a word.

use super::lexicon;
use super::params::{ParamKind, Span};
use super::words::{Token, sentence_start, tokens};

/// Nouns that name the word next to them ("the function main", "the regex crate").
const NAMING: &[&str] = &[
    "fn",
    "func",
    "function",
    "method",
    "struct",
    "class",
    "enum",
    "trait",
    "interface",
    "crate",
    "package",
    "gem",
    "library",
    "lib",
    "module",
    "branch",
    "tag",
    "table",
    "column",
    "field",
    "variable",
    "var",
    "constant",
    "const",
    "macro",
    "subcommand",
    "command",
    "endpoint",
    "route",
    "service",
    "job",
    "image",
    "container",
    "directory",
    "folder",
    "repo",
    "repository",
    "namespace",
    "component",
    "fixture",
    "database",
    "queue",
    "topic",
    "user",
    "group",
    "host",
    "remote",
    "binary",
    "target",
    "workspace",
    "profile",
    "plugin",
    "extension",
    "property",
    "attribute",
    "dependency",
    "dep",
    "feature",
    "hook",
    "test",
];

/// Words that say what is named rather than being a name ("the function body", "the file list").
const RELATION: &[&str] = &[
    "name",
    "names",
    "contents",
    "content",
    "body",
    "signature",
    "definition",
    "list",
    "value",
    "values",
    "output",
    "input",
    "code",
    "logic",
    "call",
    "calls",
    "usage",
    "usages",
    "implementation",
    "level",
    "system",
    "suite",
    "history",
    "instead",
    "itself",
    "here",
    "there",
    "first",
    "last",
    "next",
    "previous",
    "same",
    "other",
    "default",
    "each",
    "every",
    "one",
    "two",
    "three",
    "both",
    "either",
    "more",
    "less",
    "than",
    "called",
    "named",
    "version",
    "versions",
    "again",
    "too",
    "only",
    "not",
    "no",
    "yes",
    "it",
    "them",
    "they",
    "this",
    "that",
    "these",
    "those",
    "what",
    "which",
    "who",
    "whose",
    "if",
    "else",
    "but",
    "via",
    "using",
    "use",
    "used",
    "without",
    "like",
    "per",
    "after",
    "before",
    "over",
    "under",
    "above",
    "below",
    "out",
    "off",
    "about",
    "current",
    "parent",
    "working",
    "existing",
    "whole",
    "entire",
    "given",
    "specified",
    "specific",
    "particular",
    "local",
    "temporary",
    "temp",
    "hidden",
    "empty",
    "old",
    "new",
    "latest",
    "newest",
    "oldest",
    "all",
    "any",
];

/// Words after which the next word is a name whatever it is ("a function called parse").
/// "matching build", "matches config": the pattern a search looks for.
const NAMING_VERBS: &[&str] = &["named", "called", "titled", "labelled", "labeled", "matching", "matches"];

/// Finds names and glued numbers in `text` that no span in `typed` covers. Returns new spans only.
pub fn find(text: &str, typed: &[Span]) -> Vec<Span> {
    let toks = tokens(text, typed);
    let title_case = is_title_case(&toks);
    let mut names: Vec<bool> = toks.iter().map(|t| t.value.is_some_and(|v| is_name_kind(typed[v].kind))).collect();
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let t = &toks[i];
        if t.value.is_some() {
            continue;
        }
        if let Some(span) = glued_number(t) {
            out.push(span);
            continue;
        }
        let by_shape = is_name_shape(text, t);
        let by_place = plain(t) && placed_as_name(text, &toks, &names, i, title_case);
        if by_shape || by_place {
            names[i] = true;
            out.push(Span { start: t.start, end: t.end, kind: ParamKind::Identifier, value: t.text.clone() });
        }
    }
    out
}

/// Types that name something (for the "`a` to b" rule).
fn is_name_kind(k: ParamKind) -> bool {
    matches!(k, ParamKind::Identifier | ParamKind::Package | ParamKind::String | ParamKind::Path)
}

/// A word that may be a name by its place: not a stopword, kind noun, relation word or number.
pub fn plain(t: &Token) -> bool {
    plain_word(&t.lower)
}

/// `plain` for a lowercase word.
pub fn plain_word(w: &str) -> bool {
    w.chars().count() >= 2
        && w.chars().any(char::is_alphabetic)
        && !lexicon::STOPWORDS.contains(&w)
        && !RELATION.contains(&w)
        && lexicon::kind(w).is_none()
}

fn placed_as_name(text: &str, toks: &[Token], names: &[bool], i: usize, title_case: bool) -> bool {
    let t = &toks[i];
    let prev = i.checked_sub(1).map(|p| &toks[p]).filter(|_| !t.after_break);
    let next = toks.get(i + 1).filter(|n| !n.after_break);
    let prev_word = prev.map(|p| p.lower.as_str()).unwrap_or("");
    let next_word = next.map(|n| n.lower.as_str()).unwrap_or("");
    // "a function called parse", "the function main", "a dependency on regex".
    if NAMING_VERBS.contains(&prev_word) || (NAMING.contains(&prev_word) && prev.is_some_and(|p| p.value.is_none())) {
        return true;
    }
    if prev_word == "on"
        && i >= 2
        && !toks[i - 1].after_break
        && matches!(toks[i - 2].lower.as_str(), "dependency" | "depend" | "depends" | "depending" | "dep")
    {
        return true;
    }
    // "the regex crate", "the target directory": not a participle ("the failing test").
    let participle = t.lower.ends_with("ing") || t.lower.ends_with("ed");
    let compound = lexicon::kind(&format!("{} {next_word}", t.lower)).is_some();
    if NAMING.contains(&next_word)
        && next.is_some_and(|n| n.value.is_none() && bare_after(text, t, n))
        && !participle
        && !compound
    {
        return lexicon::verb(&t.lower).is_none() || prev.is_some_and(|p| matches!(p.lower.as_str(), "the" | "a"));
    }
    // "serde 1.0.200", "python 3.12".
    if next.is_some_and(|n| n.lower == "<version>") && lexicon::verb(&t.lower).is_none() && !participle {
        return true;
    }
    // "rename fn run_server to serve": after "to"/"into"/"as" that follows a name.
    if matches!(prev_word, "to" | "into" | "as")
        && i >= 2
        && !toks[i - 1].after_break
        && names[i - 2]
        && lexicon::verb(&t.lower).is_none()
    {
        return true;
    }
    // "switch from Postgres to MySQL": capitalised inside a sentence, unless every word is.
    !title_case
        && t.text.chars().next().is_some_and(char::is_uppercase)
        && t.text.chars().skip(1).any(char::is_lowercase)
        && !sentence_start(text, toks, i)
        && lexicon::verb(&t.lower).is_none()
}

/// Whether `next` is a bare word right after `t`: only spaces between them and no glob or regex
/// character glued to it (the `lib` inside `*lib*` names nothing).
fn bare_after(text: &str, t: &Token, next: &Token) -> bool {
    let glued = |c: char| matches!(c, '*' | '^' | '$' | '[' | ']' | '\\' | '+' | '|');
    text.get(t.end..next.start).is_some_and(|gap| gap.chars().all(char::is_whitespace))
        && !text.get(next.end..).is_some_and(|rest| rest.starts_with(glued))
}

/// Names by their shape alone.
fn is_name_shape(text: &str, t: &Token) -> bool {
    let w = t.text.as_str();
    let letters = w.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 0 {
        return false;
    }
    let called = text[t.end..].starts_with("()");
    let snake = w.contains('_') && w.chars().any(char::is_alphanumeric);
    let path_like = w.contains("::");
    let camel = w.chars().zip(w.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let humps = w.chars().filter(|c| c.is_uppercase()).count();
    let pascal = humps >= 2 && w.chars().next().is_some_and(char::is_uppercase) && w.chars().any(char::is_lowercase);
    let env = w.starts_with('$') && w.len() > 1;
    let dotted = w.split('.').count() >= 2 && w.split('.').all(|p| p.chars().count() >= 2 && !p.is_empty());
    let mixed =
        w.chars().any(|c| c.is_ascii_digit()) && w.chars().next().is_some_and(char::is_alphabetic) && !w.contains('\'');
    called || snake || path_like || camel || pascal || env || dotted || mixed
}

/// `100MB`, `30d`, `+7`: the digits are a number, the unit or sign stays text.
fn glued_number(t: &Token) -> Option<Span> {
    let w = t.text.as_str();
    let digits = w.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = &w[digits..];
    let ordinal = matches!(rest.to_lowercase().as_str(), "st" | "nd" | "rd" | "th" | "s");
    let unit = rest.len() <= 3 && rest.chars().all(char::is_alphabetic) && !ordinal;
    (rest.is_empty() || unit).then(|| Span {
        start: t.start,
        end: t.start + digits,
        kind: ParamKind::Number,
        value: w[..digits].to_string(),
    })
}

/// Title Case Tasks Capitalise Every Word: capitals then tell nothing.
fn is_title_case(toks: &[Token]) -> bool {
    let long: Vec<&Token> = toks.iter().filter(|t| t.value.is_none() && t.text.chars().count() >= 4).collect();
    let caps = long.iter().filter(|t| t.text.chars().next().is_some_and(char::is_uppercase)).count();
    long.len() >= 3 && caps * 5 >= long.len() * 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::params::spans;
    use rstest::rstest;

    fn names(text: &str) -> Vec<String> {
        find(text, &spans(text)).into_iter().map(|s| s.value).collect()
    }

    #[rstest]
    #[case("add a dependency on regex version 1.10", &["regex"])]
    #[case("rename fn run_server to serve", &["run_server", "serve"])]
    #[case("use node 18.2 in the build", &["node"])]
    #[case("add the environment variable `x` and a unit test", &[])]
    #[case("ignore the target directory in git", &["target"])]
    #[case("push the branch feature-login to origin", &["feature-login", "origin"])]
    #[case("switch the database from Postgres to MySQL", &["Postgres", "MySQL"])]
    #[case("call parseArgs and HttpClient from os.path", &["parseArgs", "HttpClient", "os.path"])]
    #[case("find files larger than 100MB", &["100"])]
    #[case("fix the failing test in the parser", &[])]
    #[case("add logging to the server", &[])]
    #[case("Add Support For Dark Mode", &[])]
    #[case("write a function called normalize", &["normalize"])]
    // A naming noun names only a bare word next to it, never the word before a glob around it.
    #[case("dirs whose name matches *lib* here", &[])]
    #[case("dirs whose name matches lib* here", &[])]
    #[case("use the regex lib here", &["regex"])]
    #[case("Find only directories matching build", &["build"])]
    #[case("list the matching files", &[])]
    fn names_by_shape_and_place(#[case] text: &str, #[case] want: &[&str]) {
        assert_eq!(names(text), want, "{text}");
    }
}
