//! Another spelling of a stored value, rewritten in an accepted suggestion. Extraction turns a
//! value into a slot where the steps say it as written; where they spell it another way
//! (`checkCmd` for the `check` command, `Check` for it as a variant, `\brun_server\b` glued into
//! a search pattern) the stored value stays literal, and a plan filled with another value would
//! mix the two tasks. A hit is refused for that (`spelling::stale`); an agent that took the
//! suggestion has already judged the plan to be its task's, so here each such spelling takes
//! the same spelling of the new value (`buildCmd`, `Sync`, `\bdo_sync\b`), and only what is left
//! is named in `caution`.
//!
//! A one-word value written as stored and standing alone is left: the extraction saw it and did
//! not make it a slot (`check` in `cargo check` is the command, not the stored name).

use super::fill::Filled;
use super::spelling::{self, words};
use super::template::PlanTemplate;
use serde_json::Value;

/// Rewrites, in the filled steps, every other spelling of each slot's stored value (its
/// `example`) as the same spelling of the value the slot took.
pub fn respell(template: &PlanTemplate, filled: &mut Filled) {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut versions: Vec<(String, String)> = Vec::new();
    for slot in &template.slots {
        let Some(old) = slot.example.as_deref() else { continue };
        let Some(Value::String(new)) = filled.values.get(&slot.name) else { continue };
        if new == old || new.is_empty() {
            continue;
        }
        if old.chars().any(char::is_alphabetic) {
            pairs.push((old.to_string(), new.clone()));
        } else if dotted(old) {
            versions.push((old.to_string(), new.clone()));
        }
    }
    rewrite_steps(filled, &pairs, false);
    // A file's name without its extension, inside a longer path or name, is the same file
    // (`tests/test_text.py` for `app/text.py`, `internal/wrap/parser_test.go`).
    let stems: Vec<(String, String)> = pairs.iter().flat_map(|(o, n)| stem_pairs(o, n)).collect();
    // A version glued to a prefix (`v0.4.3`, `pkg@0.4.3`) is the same version.
    if versions.is_empty() && stems.is_empty() {
        return;
    }
    let protect = filled.value_texts();
    for step in &mut filled.steps {
        map_strings(&mut step.inputs, &mut |s| glued_stems(&glued_versions(s, &versions), &stems, &protect));
    }
}

/// For two file paths with extensions: the paths without them and the modules they are imported
/// as (when the stored one has a directory), then the bare names, each at least three characters
/// and different.
fn stem_pairs(old: &str, new: &str) -> Vec<(String, String)> {
    let bare = |p: &str| -> Option<String> {
        let (head, ext) = p.rsplit_once('.')?;
        let ok =
            !ext.is_empty() && ext.len() <= 4 && ext.chars().all(|c| c.is_ascii_alphanumeric()) && !head.is_empty();
        ok.then(|| head.to_string())
    };
    let (Some(o), Some(n)) = (bare(old), bare(new)) else { return Vec::new() };
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let mut out = Vec::new();
    if o.contains('/') {
        out.push((o.clone(), n.clone()));
        // The module a Python or Java file is imported as.
        out.push((o.replace('/', "."), n.replace('/', ".")));
    }
    out.push((name(&o), name(&n)));
    out.retain(|(a, b)| a.chars().count() >= 3 && a != b && a.chars().any(char::is_alphabetic));
    out
}

/// `s` with each stored file stem rewritten where it is glued into a longer path or name (a bare
/// name standing as a word of its own is left: `main` in "run it from main" is not `src/main.rs`).
fn glued_stems(s: &str, stems: &[(String, String)], protect: &[String]) -> String {
    let mut out = s.to_string();
    for (old, new) in stems {
        let guarded = guarded(&out, protect);
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let apart = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | ',' | ':' | '=');
        out = replace_where(&out, old, new, |t, i, end| {
            let token_start = t[..i].rfind(apart).map_or(0, |k| k + 1);
            let token_end = t[end..].find(apart).map_or(t.len(), |k| end + k);
            !alnum(t[..i].chars().next_back())
                && !alnum(t[end..].chars().next())
                && (old.contains(['/', '.']) || (token_start, token_end) != (i, end))
                && !overlaps(&guarded, i, end)
        });
    }
    out
}

/// Rewrites each pair's stored value in every spelling through the filled steps, leaving the
/// filled values where they stand (`Header` inside `AppHeader`). `alone`: also where the stored
/// value stands as written on its own (a word no slot took, which the agent gave a value for).
pub fn rewrite_steps(filled: &mut Filled, pairs: &[(String, String)], alone: bool) {
    if pairs.is_empty() {
        return;
    }
    let protect = filled.value_texts();
    for step in &mut filled.steps {
        map_strings(&mut step.inputs, &mut |s| rewrite(s, pairs, &protect, alone));
    }
}

/// Digits with at least one dot between them, nothing else: a version the steps may glue.
fn dotted(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() >= 2 && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// `s` with each stored version that is neither part of a longer number nor already the new
/// value rewritten as the new one.
fn glued_versions(s: &str, versions: &[(String, String)]) -> String {
    let numeric = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
    versions.iter().fold(s.to_string(), |out, (old, new)| {
        replace_where(&out, old, new, |t, i, end| {
            !numeric(t[..i].chars().next_back()) && !numeric(t[end..].chars().next())
        })
    })
}

/// `s` with `old` replaced by `new` at each place (start, end) `keep` accepts.
fn replace_where(s: &str, old: &str, new: &str, keep: impl Fn(&str, usize, usize) -> bool) -> String {
    let at: Vec<usize> = s.match_indices(old).map(|(i, _)| i).filter(|&i| keep(s, i, i + old.len())).collect();
    let mut out = s.to_string();
    for i in at.into_iter().rev() {
        out.replace_range(i..i + old.len(), new);
    }
    out
}

/// Where the protected texts stand in `s` (byte ranges).
pub(super) fn guarded(s: &str, protect: &[String]) -> Vec<(usize, usize)> {
    protect.iter().flat_map(|p| s.match_indices(p.as_str()).map(|(i, m)| (i, i + m.len()))).collect()
}

/// Whether `start..end` overlaps any guarded range.
pub(super) fn overlaps(guarded: &[(usize, usize)], start: usize, end: usize) -> bool {
    guarded.iter().any(|&(a, b)| start < b && a < end)
}

/// A value's spellings in `spelling::forms`' fixed order (none for a value without words): two
/// values' lists pair up form by form.
fn forms(v: &str) -> Vec<String> {
    let w = words(v);
    if w.is_empty() {
        return Vec::new();
    }
    spelling::forms(&w).to_vec()
}

/// One string with each stored value's other spellings rewritten.
fn rewrite(s: &str, pairs: &[(String, String)], protect: &[String], alone_too: bool) -> String {
    let guarded = guarded(s, protect);
    // (start, end, replacement), every match of every form.
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    for (old, new) in pairs {
        let several = words(old).len() >= 2;
        let mut seen: Vec<&str> = Vec::new();
        let (olds, news) = (forms(old), forms(new));
        // A one-word value filled with a value of several words: its one spelling stands for all.
        let spread = !several && !olds.is_empty() && words(new).len() > 1;
        // The value as written first, then its other spellings, each paired with the new value's.
        let written = (old.as_str(), new.as_str());
        let spelt = olds.iter().map(String::as_str).zip(news.iter().map(String::as_str));
        for (of, nf) in std::iter::once(written).chain(spelt) {
            if of.chars().count() < 3 || seen.contains(&of) {
                continue;
            }
            seen.push(of);
            for (i, _) in s.match_indices(of) {
                let end = i + of.len();
                let (before, after) = (s[..i].chars().next_back(), s[end..].chars().next());
                let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                // Standing alone as written: the extraction saw it there and made no slot of it.
                let alone = !word(before) && !word(after);
                // A regex word boundary (`\b`) bounds a word as a space does.
                let before = if s[..i].ends_with("\\b") { None } else { before };
                let after = if s[end..].starts_with("\\b") { None } else { after };
                let fits = if several {
                    // A value of several words is itself wherever it stands.
                    true
                } else {
                    // One word: as a word or as the head of an identifier (`checkCmd`), and not
                    // as written standing alone.
                    let starts = of.starts_with(char::is_uppercase) || !word(before);
                    let ends = !after.is_some_and(|c| c.is_lowercase() || c.is_ascii_digit());
                    starts && ends && (alone_too || !(of == old && alone)) && !opens_sentence_as_verb(s, i, of, old)
                };
                if fits && !overlaps(&guarded, i, end) {
                    // One lowercase word stands for every spelling of a value of several words.
                    let nf = if spread && of == olds[0] { by_place(before, after, &news, new) } else { nf };
                    found.push((i, end, nf.to_string()));
                }
            }
        }
    }
    if found.is_empty() {
        return s.to_string();
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for (i, end, nf) in found {
        if i < at {
            continue;
        }
        out.push_str(&s[at..i]);
        out.push_str(&nf);
        at = end;
    }
    out.push_str(&s[at..]);
    out
}

/// Which of the new value's spellings (`forms`) a one-word stored value's place asks for: the
/// head of a camelCase name (`jsonFlag`), a snake_case one (`json_out`), a whole quoted string
/// (`"json"`, as the command line spells it), else the value as written.
fn by_place<'a>(before: Option<char>, after: Option<char>, news: &'a [String], new: &'a str) -> &'a str {
    if after.is_some_and(char::is_uppercase) {
        &news[0]
    } else if before == Some('_') || after == Some('_') {
        &news[2]
    } else if matches!(before, Some('"' | '\'')) && before == after {
        &news[4]
    } else {
        new.trim_start_matches('-')
    }
}

/// Whether `of`, at byte `i` of `s`, is the stored value's capitalised form opening a sentence
/// while the value is an English verb: "Check the help text" in a step of the `check` subcommand
/// is the verb, not the subcommand.
fn opens_sentence_as_verb(s: &str, i: usize, of: &str, old: &str) -> bool {
    let capitalised = of.starts_with(char::is_uppercase) && old.chars().all(|c| c.is_lowercase());
    let head = &s[..i];
    let opens = head.trim_end().is_empty()
        || (head.ends_with(char::is_whitespace) && head.trim_end().ends_with(['.', '!', '?', ':', ';']));
    capitalised && opens && super::lexicon::verb(old).is_some()
}

/// Calls `f` on every string inside a JSON value, keeping what it returns.
fn map_strings(v: &mut Value, f: &mut impl FnMut(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| map_strings(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| map_strings(x, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::params::ParamKind;
    use crate::plan::template::{Slot, Step};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn respelt(step: &str, slots: &[(&str, &str, &str)]) -> String {
        let mut t =
            PlanTemplate { steps: vec![], slots: vec![], outputs: vec![], description: None, version: "1".into() };
        let mut values = BTreeMap::new();
        for (name, old, new) in slots {
            let mut s = Slot::required(name.to_string(), ParamKind::Any);
            s.example = Some(old.to_string());
            t.slots.push(s);
            values.insert(name.to_string(), json!(new));
        }
        let step: Step = serde_json::from_value(json!({"tool": "todo", "inputs": {"text": step}})).unwrap();
        let mut f = Filled { values, sources: BTreeMap::new(), missing: vec![], steps: vec![step] };
        respell(&t, &mut f);
        f.steps[0].inputs["text"].as_str().unwrap().to_string()
    }

    #[test]
    fn other_spellings_of_the_stored_value_take_the_new_values_spelling() {
        assert_eq!(respelt(r"rg '\brun_server\b' src", &[("old", "run_server", "do_sync")]), r"rg '\bdo_sync\b' src");
        assert_eq!(
            respelt("checkCmd.Flags().BoolVar(&jsonFlag, \"json\")", &[("cmd", "check", "build")]),
            "buildCmd.Flags().BoolVar(&jsonFlag, \"json\")"
        );
        assert_eq!(respelt("Add a Check variant", &[("cmd", "check", "sync")]), "Add a Sync variant");
        assert_eq!(
            respelt("Add maxRetries for page-size", &[("key", "max-retries", "page-size")]),
            "Add pageSize for page-size"
        );
        assert_eq!(respelt(r"rg '\bHeader\b'", &[("old", "Header", "Btn")]), r"rg '\bBtn\b'");
    }

    #[test]
    fn a_regex_word_boundary_bounds_a_one_word_value_and_a_glued_version_is_the_version() {
        assert_eq!(respelt(r"rg '\bCheck\b' src", &[("cmd", "check", "list")]), r"rg '\bList\b' src");
        assert_eq!(respelt("Tag v0.4.3, push pkg@0.4.3", &[("v", "0.4.3", "1.0.0")]), "Tag v1.0.0, push pkg@1.0.0");
        assert_eq!(respelt("pin 10.4.3 and 0.4.30", &[("v", "0.4.3", "1.0.0")]), "pin 10.4.3 and 0.4.30");
    }

    #[test]
    fn a_one_word_value_takes_the_spelling_its_place_asks_for() {
        let slot = [("flag", "--json", "--no-cache")];
        assert_eq!(
            respelt("BoolVar(&jsonFlag, \"json\", false, \"json mode\")", &slot),
            "BoolVar(&noCacheFlag, \"no-cache\", false, \"no-cache mode\")"
        );
        assert_eq!(respelt("if opts.json_out {", &slot), "if opts.no_cache_out {");
        assert_eq!(respelt("warn(\"json is deprecated\")", &slot), "warn(\"no-cache is deprecated\")");
        assert_eq!(respelt("Dispatch Commands::Check", &[("cmd", "check", "doctor")]), "Dispatch Commands::Doctor");
    }

    #[test]
    fn a_files_stem_glued_into_a_longer_path_is_the_file() {
        let slot = [("path", "naruno/connection.py", "app/utils/text.py")];
        assert_eq!(respelt("Write tests/test_connection.py", &slot), "Write tests/test_text.py");
        assert_eq!(respelt("from naruno.connection import x", &slot), "from app.utils.text import x");
        let slot = [("path", "internal/wrap/parser.go", "pathutil/path.go")];
        assert_eq!(respelt("edit internal/wrap/parser_test.go", &slot), "edit pathutil/path_test.go");
        let slot = [("path", "src/main.rs", "src/args.rs")];
        assert_eq!(respelt("Act on cli.verbose in main", &slot), "Act on cli.verbose in main", "a word of its own");
    }

    #[test]
    fn the_new_value_and_a_lone_word_as_written_are_left() {
        assert_eq!(
            respelt("rename Header to AppHeader", &[("new", "Header", "AppHeader")]),
            "rename Header to AppHeader"
        );
        assert_eq!(respelt("run cargo check on list", &[("cmd", "check", "list")]), "run cargo check on list");
        assert_eq!(respelt("Check the help text", &[("cmd", "check", "doctor")]), "Check the help text");
        assert_eq!(respelt("Built. Check it", &[("cmd", "check", "doctor")]), "Built. Check it");
        assert_eq!(respelt("Sync the Check variant", &[("cmd", "check", "doctor")]), "Sync the Doctor variant");
        assert_eq!(respelt("recheck the checker", &[("cmd", "check", "list")]), "recheck the checker");
        assert_eq!(respelt("same run_server", &[("old", "run_server", "run_server")]), "same run_server");
    }
}
