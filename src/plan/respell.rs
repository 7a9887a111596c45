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
    let pairs: Vec<(String, String)> = template
        .slots
        .iter()
        .filter_map(|slot| {
            let old = slot.example.as_deref()?;
            let Some(Value::String(new)) = filled.values.get(&slot.name) else { return None };
            let differs = new != old && !new.is_empty() && old.chars().any(char::is_alphabetic);
            differs.then(|| (old.to_string(), new.clone()))
        })
        .collect();
    if pairs.is_empty() {
        return;
    }
    // Where the filled values already stand, nothing is rewritten (`Header` inside `AppHeader`).
    let protect: Vec<String> =
        filled.values.values().filter_map(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string).collect();
    for step in &mut filled.steps {
        map_strings(&mut step.inputs, &mut |s| rewrite(s, &pairs, &protect));
    }
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
fn rewrite(s: &str, pairs: &[(String, String)], protect: &[String]) -> String {
    let guarded: Vec<(usize, usize)> =
        protect.iter().flat_map(|p| s.match_indices(p.as_str()).map(|(i, m)| (i, i + m.len()))).collect();
    // (start, end, replacement), every match of every form.
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    for (old, new) in pairs {
        let several = words(old).len() >= 2;
        let mut seen: Vec<&str> = Vec::new();
        let (olds, news) = (forms(old), forms(new));
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
                let before = s[..i].chars().next_back();
                let after = s[end..].chars().next();
                let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                let alone = !word(before) && !word(after);
                let fits = if several {
                    // A value of several words is itself wherever it stands.
                    true
                } else {
                    // One word: as a word or as the head of an identifier (`checkCmd`), and not
                    // as written standing alone.
                    let starts = of.starts_with(char::is_uppercase) || !word(before);
                    let ends = !after.is_some_and(|c| c.is_lowercase() || c.is_ascii_digit());
                    starts && ends && !(of == old && alone)
                };
                if fits && !guarded.iter().any(|&(a, b)| i < b && a < end) {
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
    fn the_new_value_and_a_lone_word_as_written_are_left() {
        assert_eq!(
            respelt("rename Header to AppHeader", &[("new", "Header", "AppHeader")]),
            "rename Header to AppHeader"
        );
        assert_eq!(respelt("run cargo check on list", &[("cmd", "check", "list")]), "run cargo check on list");
        assert_eq!(respelt("recheck the checker", &[("cmd", "check", "list")]), "recheck the checker");
        assert_eq!(respelt("same run_server", &[("old", "run_server", "run_server")]), "same run_server");
    }
}
