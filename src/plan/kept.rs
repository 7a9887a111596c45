//! Words of the stored task that a filled plan still says although the new task does not. The
//! extraction makes a slot only of a typed value (a path, a version, a name in backticks); a plain
//! word the stored task chose (`helpers` in "Rename the utils module to helpers", the `type` label,
//! the `cargo` ecosystem, a commit hash) stays written into the steps. A suggestion the agent
//! takes is then filled with its values but keeps those words, and a plan that says "git mv
//! utils.py to helpers.py" for "move `functions` to `tools`" is not the agent's plan.
//!
//! Only what a step does counts: a word in a call's note to the user (`description`) does not.
//!
//! So an accept names each such word: in `kept` when nothing else about the fill is in doubt (the
//! answer stays one call), else as a value to give (`kind` "word", the stored word as the guess).
//! The agent answers with its own value, or the same word when the plan's choice is also its own,
//! and refrain rewrites the word where the steps say it.

use super::fill::{Filled, walk_strings};
use super::lexicon;
use super::respell;
use super::template::PlanTemplate;
use serde_json::Value;

crate::pattern_table! { pub PATTERNS in "kept";
    /// A word of a task as a value may be spelt: letters and digits, with `_ . / -` inside.
    TOKEN = r"[A-Za-z0-9][A-Za-z0-9_./-]*[A-Za-z0-9]", "apiflask/helpers.py";
}

/// Fewest characters a kept word has.
const MIN_CHARS: usize = 3;

/// The stored task's words the filled steps still say as whole words, in the stored task's
/// order, that the new task does not say: not a slot's stored or new value, not a stopword or an
/// action verb.
pub fn words(stored: &str, new: &str, template: &PlanTemplate, filled: &Filled) -> Vec<String> {
    let said: Vec<String> = TOKEN.find_iter(new).map(|m| m.as_str().to_lowercase()).collect();
    let values: Vec<String> = template
        .slots
        .iter()
        .filter_map(|s| s.example.clone())
        .chain(filled.values.values().filter_map(|v| v.as_str().map(str::to_string)))
        .map(|v| v.to_lowercase())
        .collect();
    let texts = step_texts(filled);
    let protect = filled.value_texts();
    let mut out: Vec<String> = Vec::new();
    for m in TOKEN.find_iter(stored) {
        let w = m.as_str();
        let lower = w.to_lowercase();
        let plain = lower.chars().all(|c| c.is_ascii_lowercase());
        let common = lexicon::STOPWORDS.contains(&lower.as_str()) || (plain && lexicon::verb(&lower).is_some());
        if w.chars().count() < MIN_CHARS
            || common
            || out.iter().any(|o| o == w)
            || said.contains(&lower)
            || values.iter().any(|v| v.contains(&lower))
        {
            continue;
        }
        if texts.iter().any(|t| stands_in(t, w, &protect)) {
            out.push(w.to_string());
        }
    }
    out
}

/// Rewrites, in the filled steps, each given word where it stands and in its other spellings
/// (`evaluate_snapshot` for `evaluate`), as `respell` rewrites a slot's stored value.
pub fn rewrite(filled: &mut Filled, given: &[(String, String)]) {
    let pairs: Vec<(String, String)> = given.iter().filter(|(old, new)| old != new).cloned().collect();
    respell::rewrite_steps(filled, &pairs, true);
}

/// Inputs that only describe a call to the user (Claude Code's and Codex's `description`, Gemini
/// CLI's `instruction`): a stored word there changes nothing the call does.
const NOTES: &[&str] = &["description", "instruction", "explanation"];

/// Every string of the filled steps but their notes.
fn step_texts(filled: &Filled) -> Vec<String> {
    let mut out = Vec::new();
    for step in &filled.steps {
        match &step.inputs {
            Value::Object(o) => o
                .iter()
                .filter(|(k, _)| !NOTES.contains(&k.as_str()))
                .for_each(|(_, v)| walk_strings(v, &mut |s| out.push(s.to_string()))),
            v => walk_strings(v, &mut |s| out.push(s.to_string())),
        }
    }
    out
}

/// Whether `w` stands in `s` as a whole word (no letter, digit or `_` on either side), outside
/// any occurrence of a filled value.
fn stands_in(s: &str, w: &str, protect: &[String]) -> bool {
    let guarded = respell::guarded(s, protect);
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    s.match_indices(w).any(|(i, _)| {
        let end = i + w.len();
        !word(s[..i].chars().next_back()) && !word(s[end..].chars().next()) && !respell::overlaps(&guarded, i, end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::params::ParamKind;
    use crate::plan::template::{Slot, Step};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn filled(step: &str, slot: (&str, &str, &str)) -> (PlanTemplate, Filled) {
        let mut s = Slot::required(slot.0.to_string(), ParamKind::Any);
        s.example = Some(slot.1.to_string());
        let t = PlanTemplate { steps: vec![], slots: vec![s], outputs: vec![], description: None, version: "1".into() };
        let step: Step = serde_json::from_value(json!({"tool": "todo", "inputs": {"text": step}})).unwrap();
        let values = BTreeMap::from([(slot.0.to_string(), json!(slot.2))]);
        (t, Filled { values, sources: BTreeMap::new(), missing: vec![], steps: vec![step] })
    }

    #[test]
    fn a_plain_word_of_the_stored_task_the_steps_still_say_is_named_and_rewritten_when_given() {
        let (t, mut f) = filled("git mv apiflask/functions.py to apiflask/helpers.py", ("old", "utils", "functions"));
        let kept = words("Rename the utils module to helpers", "move `functions` to a module called `tools`", &t, &f);
        assert_eq!(kept, ["helpers"]);
        rewrite(&mut f, &[("helpers".into(), "tools".into())]);
        assert_eq!(f.steps[0].inputs["text"], "git mv apiflask/functions.py to apiflask/tools.py");
        let (_, mut f) = filled("fn evaluate_snapshot() { evaluate(x) }", ("old", "utils", "functions"));
        rewrite(&mut f, &[("evaluate".into(), "to_json".into())]);
        assert_eq!(f.steps[0].inputs["text"], "fn to_json_snapshot() { to_json(x) }");
    }

    #[test]
    fn words_the_new_task_says_verbs_and_parts_of_longer_words_are_not_named() {
        let (t, f) = filled("Rename the helpers module: rehelpers", ("old", "utils", "functions"));
        assert!(
            words("Rename the utils module to helpers", "rename the functions module to helpers", &t, &f).is_empty()
        );
        assert_eq!(words("Rename the utils module to helpers", "rename functions to helpers", &t, &f), ["module"]);
        let (t, mut f) = filled("x", ("old", "utils", "functions"));
        f.steps[0].inputs = json!({"file_path": "a.txt", "instruction": "Fix the typo"});
        assert!(words("Fix the typo in a.txt", "correct the spelling in a.txt", &t, &f).is_empty(), "a note only");
        let (t, f) = filled("Write tests for x in rehelpers_x", ("old", "utils", "functions"));
        assert!(words("Rename the utils module to helpers", "move functions", &t, &f).is_empty());
    }
}
