//! Masking: every value span of a task (path, name, flag, number, version, date, URL, quoted
//! string, issue, PR) becomes a typed placeholder, so plans are compared on what a task asks and
//! never on its values. `refrain mask` prints exactly this, so a verifier trained on masked pairs
//! sees what refrain shows it when serving.
//!
//! Values come from the typed tables (`params`), from names found by shape or place (`names`),
//! and, when known, from values the caller names (a trace's values, a data set's `values`).

use super::names;
pub use super::params::placeholder;
use super::params::{self, ParamKind, Span};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

/// A task with its values found and masked.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Masked {
    /// The task with each value replaced by its placeholder (`<path>`, `<name>`...).
    pub text: String,
    /// The values, in order of appearance.
    #[serde(skip)]
    pub spans: Vec<Span>,
}

crate::pattern_table! { pub PATTERNS in "mask";
    /// A file extension or a glob on one (`.py`, `*.tar.gz`): the value is the extension, the
    /// star stays text, so `*.txt` in a command takes `.py` from "all .py files".
    EXTENSION_RE = r#"(?:^|[\s(\["'`*])(\.[A-Za-z][A-Za-z0-9]{0,9}(?:\.[A-Za-z0-9]{1,6})?)(?:$|[\s)\]"'`,;:!?])"#,
        "find all *.txt files";
    /// A word with glob or regex characters in it (`*lib*`, `^test_`, `[0-9]+`, `error$`): a
    /// pattern the task searches for, so a value, never words.
    GLOB_RE = r#"(?:^|[\s(])([^\s"'`()<>]*[*^$?\[\\][^\s"'`()<>]*)"#,
        "find dirs matching *lib* here";
}

/// The values of a task (typed, then names), in order, never overlapping.
pub fn spans(text: &str) -> Vec<Span> {
    let mut all = typed_spans(text);
    let extra = names::find(text, &all);
    all.extend(extra);
    all.sort_by_key(|s| s.start);
    all
}

/// The values the tables find by their shape (typed values, extensions, globs), before names
/// are guessed from the words around them.
pub fn typed_spans(text: &str) -> Vec<Span> {
    let mut all = params::spans(text);
    all.retain(|s| s.kind != ParamKind::Path || !is_bare_dot(&s.value));
    for c in GLOB_RE.captures_iter(text) {
        let Some(g) = c.get(1) else { continue };
        let Some(v) = glob(g.as_str()) else { continue };
        let end = g.start() + v.len();
        if !all.iter().any(|s| s.start < end && g.start() < s.end) {
            all.push(Span { start: g.start(), end, kind: ParamKind::String, value: v.to_string() });
        }
    }
    for c in EXTENSION_RE.captures_iter(text) {
        let Some(g) = c.get(1) else { continue };
        if !all.iter().any(|s| s.start < g.end() && g.start() < s.end) {
            all.push(Span { start: g.start(), end: g.end(), kind: ParamKind::Path, value: g.as_str().to_string() });
        }
    }
    all.sort_by_key(|s| s.start);
    all
}

/// The pattern in a word that has glob or regex characters, without the sentence punctuation
/// after it (`*lib*,` is `*lib*`; `case?` is no pattern; `$HOME` is a name, not a pattern).
fn glob(word: &str) -> Option<&str> {
    let mut v = word.trim_end_matches([',', ';', ':', '!', '.', '?']);
    // An escaped dot ends the pattern (`[0-9]+\.`): it is no full stop.
    if v.ends_with('\\') && word[v.len()..].starts_with('.') {
        v = &word[..v.len() + 1];
    }
    let inner_question = v.contains('?');
    let star = v.contains('*');
    let anchored = v.starts_with('^') || (v.len() > 1 && v.ends_with('$') && !v.starts_with('$'));
    let class = v.contains('[') && v.contains(']');
    let escape = v.contains('\\') && v.chars().any(char::is_alphabetic);
    let has_text = v.chars().any(char::is_alphanumeric);
    // `*.py` alone is an extension (its value is `.py`), not a pattern of its own.
    if v.strip_prefix('*').is_some_and(|rest| rest.starts_with('.') && !rest.contains(['*', '?', '[', '^', '$', '\\']))
    {
        return None;
    }
    (has_text && (star || anchored || class || escape || inner_question)).then_some(v)
}

/// Masks a task.
pub fn mask(text: &str) -> Masked {
    let spans = spans(text);
    Masked { text: render(text, &spans), spans }
}

/// Masks a task, also masking every whole-word occurrence of the `known` values (for example the
/// values a trace used) that no other value covers.
pub fn mask_known(text: &str, known: &[String]) -> Masked {
    let mut spans = spans(text);
    let mut known: Vec<&str> = known.iter().map(|k| k.trim()).filter(|k| !k.is_empty()).collect();
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    known.dedup();
    for k in known {
        for (start, _) in text.match_indices(k) {
            let end = start + k.len();
            if !whole_word(text, start, end) || spans.iter().any(|s| s.start < end && start < s.end) {
                continue;
            }
            spans.push(Span { start, end, kind: shape(k), value: k.to_string() });
        }
    }
    spans.sort_by_key(|s| s.start);
    Masked { text: render(text, &spans), spans }
}

/// The text with each span replaced by its placeholder.
pub fn render(text: &str, spans: &[Span]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in spans {
        if s.start < at || s.end > text.len() || !text.is_char_boundary(s.start) || !text.is_char_boundary(s.end) {
            continue;
        }
        out.push_str(&text[at..s.start]);
        out.push_str(placeholder(s.kind));
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}

/// A masked text in the form two texts are compared in: lowercase, single spaces, no sentence
/// punctuation at the ends.
pub fn canonical(masked: &str) -> String {
    let lower = masked.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let joined = words.join(" ");
    joined.trim_matches(|c: char| matches!(c, '.' | '!' | '?' | ',' | ';' | ':' | ' ')).to_string()
}

/// Whether `text[start..end]` is not part of a longer word.
pub fn whole_word(text: &str, start: usize, end: usize) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let inner_first = text[start..end].chars().next();
    let inner_last = text[start..end].chars().next_back();
    let joins_before = word(inner_first) && word(text[..start].chars().next_back());
    let joins_after = word(inner_last) && word(text[end..].chars().next());
    !joins_before && !joins_after
}

/// The most specific type a bare value fits.
pub fn shape(v: &str) -> ParamKind {
    [ParamKind::Url, ParamKind::Flag, ParamKind::Date, ParamKind::Version, ParamKind::Number]
        .into_iter()
        .find(|k| k.accepts(v))
        .unwrap_or_else(|| {
            if v.contains('/') || params::spans(v).first().is_some_and(|p| p.kind == ParamKind::Path && p.value == v) {
                ParamKind::Path
            } else if ParamKind::Identifier.accepts(v) {
                ParamKind::Identifier
            } else {
                ParamKind::String
            }
        })
}

/// `.` or `..` alone is no path worth a slot.
fn is_bare_dot(v: &str) -> bool {
    v.chars().all(|c| c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("add a dependency on regex version 1.10", "add a dependency on <name> version <version>")]
    #[case("add serde 1.0.200 as a dependency", "add <name> <version> as a dependency")]
    #[case("rename fn run_server to serve", "rename fn <name> to <name>")]
    #[case("add a `--verbose` flag to src/main.rs", "add a <flag> flag to <path>")]
    #[case("please add the --quiet option in src/cli.rs", "please add the <flag> option in <path>")]
    #[case(
        "find files modified more than 30 days ago in /var/log",
        "find files modified more than <number> days ago in <path>"
    )]
    #[case("find files larger than 100MB", "find files larger than <number>MB")]
    #[case("fix issue #42 before 2024-05-01", "fix <issue> before <date>")]
    #[case("review PR #7", "review <pr>")]
    #[case(r#"change the greeting to "hello world""#, "change the greeting to <string>")]
    #[case("fetch https://example.com/a.json", "fetch <url>")]
    #[case("push the branch feature-login", "push the branch <name>")]
    #[case("the weather is nice", "the weather is nice")]
    #[case("find all *.tar.gz and .py files", "find all *<path> and <path> files")]
    // A file name with several extensions is one path.
    #[case("Decompress wiki.xml.bz2 into wiki.xml", "Decompress <path> into <path>")]
    #[case("Compress report.csv into report-2024.csv.gz", "Compress <path> into <path>")]
    #[case("Extract backup.tar.gz and rotate app.log", "Extract <path> and rotate <path>")]
    #[case("delete files older than 7 days in /tmp", "delete files older than <number> days in <path>")]
    // Globs and regexes without a dot are values, and the word before them is no name.
    #[case(
        "Find directories under /usr whose name matches *lib*, ignoring case",
        "Find directories under <path> whose name matches <string>, ignoring case"
    )]
    #[case(
        "Recursively find files matching ^test_ in the current directory",
        "Recursively find files matching <string> in the current directory"
    )]
    #[case("run the tests in files named *spec*", "run the tests in files named <string>")]
    #[case("grep for lines matching [0-9]+ or error$", "grep for lines matching <string> or <string>")]
    #[case(
        "which folders below /usr match *lib* in any case?",
        "which folders below <path> match <string> in any case?"
    )]
    #[case("list files like test_*.py", "list files like <string>")]
    #[case("split chapters.txt on [0-9]+\\. as the separator", "split <path> on <string> as the separator")]
    #[case("is it the regex crate?", "is it the <name> crate?")]
    #[case("echo $HOME and stop?", "echo <name> and stop?")]
    fn values_become_typed_placeholders(#[case] text: &str, #[case] want: &str) {
        assert_eq!(mask(text).text, want, "{text}");
    }

    #[test]
    fn known_values_are_masked_as_whole_words() {
        let m = mask_known("tidy up the parser and the parsers", &["parser".to_string()]);
        assert_eq!(m.text, "tidy up the <name> and the parsers");
        let m = mask_known("x", &[String::new(), " ".into()]);
        assert_eq!(m.text, "x");
    }

    #[test]
    fn hostile_inputs_mask_without_panicking() {
        let long = "a`b ".repeat(5000);
        for text in ["", "`", "``", "\"\"", "é `ü` 日本語 1.2.3 🙂 --x", "*.py .. . /", long.as_str()] {
            let m = mask(text);
            assert!(m.text.len() <= text.len() * 3 + 16);
        }
    }

    #[test]
    fn the_pattern_table_checks() {
        assert_eq!(crate::patterns::check_all(PATTERNS.iter().copied()).unwrap(), PATTERNS.len());
    }

    #[test]
    fn canonical_form_ignores_case_spacing_and_end_punctuation() {
        assert_eq!(canonical("  Add a <flag>   flag. "), "add a <flag> flag");
    }
}
