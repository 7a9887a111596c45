//! Another spelling of a stored value left in a filled plan. Extraction turns a value into a
//! slot where the steps say it as written; the same value spelled another way (`maxRetries` for
//! `max-retries`, `checkCmd` for the `check` command) stays literal. Filled with another value,
//! such a plan would mix the stored task's value into the new task's steps, so it is not served
//! (`stale`; a stored value of several words left as written counts too). `verbatim` asks the
//! same question more loosely, for a warning on an accepted suggestion only.

use super::fill::{Filled, walk_strings};
use super::template::PlanTemplate;
use serde_json::Value;

/// The first slot whose stored value (in any spelling) is still in the filled steps although the
/// slot took another value, with the spelling found.
pub fn stale(template: &PlanTemplate, filled: &Filled) -> Option<String> {
    let steps = steps_text(filled);
    for slot in &template.slots {
        let (Some(old), Some(new)) = (slot.example.as_deref(), filled.values.get(&slot.name)) else { continue };
        let new = match new {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        // Numbers and versions have no other spelling in code.
        if new == old || !old.chars().any(char::is_alphabetic) {
            continue;
        }
        // The new value's own spellings are where they belong.
        let mut text = steps.clone();
        for form in spellings(&new).into_iter().chain([new.clone()]) {
            text = text.replace(&form, " ");
        }
        if let Some(form) = spellings(old).into_iter().find(|f| occurs(&text, f)) {
            return Some(format!(
                "the plan's steps still say `{form}` (the stored value `{old}` spelled another way), which `{new}` cannot replace"
            ));
        }
        // A value of several words, written as stored, is that value wherever it stands, even
        // glued to other text (`\brun_server\b` in a search pattern the extraction did not turn
        // into a slot); a one-word value only counts as a word (`check` is not in `recheck`).
        if words(old).len() >= 2 && text.contains(old) {
            return Some(format!(
                "the plan's steps still say `{old}` (the stored value), which `{new}` cannot replace"
            ));
        }
    }
    None
}

/// Looser than `stale`, for a warning only (an accepted suggestion's `caution`, never a refusal):
/// the first slot whose stored value is still written as it was anywhere in the filled steps,
/// even inside a longer word, although the slot took another value.
pub fn verbatim(template: &PlanTemplate, filled: &Filled) -> Option<String> {
    let text = steps_text(filled);
    template.slots.iter().find_map(|slot| {
        let (Some(old), Some(Value::String(new))) = (slot.example.as_deref(), filled.values.get(&slot.name)) else {
            return None;
        };
        let left = text.replace(new.as_str(), " ");
        (new != old && old.chars().any(char::is_alphabetic) && left.contains(old)).then(|| {
            format!(
                "a step still says `{old}`, the stored task's value of `{}`, where this task has `{new}`",
                slot.name
            )
        })
    })
}

/// Every string inside the filled steps' inputs, one per line.
fn steps_text(filled: &Filled) -> String {
    let mut text = String::new();
    for step in &filled.steps {
        walk_strings(&step.inputs, &mut |s| {
            text.push_str(s);
            text.push('\n');
        });
    }
    text
}

/// The words of a value: split at anything not alphanumeric and where a lowercase letter meets
/// an uppercase one.
pub(super) fn words(v: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in v.chars() {
        let boundary = !ch.is_alphanumeric() || (prev_lower && ch.is_uppercase());
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur).to_lowercase());
        }
        if ch.is_alphanumeric() {
            cur.push(ch);
        }
        prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
    }
    if !cur.is_empty() {
        out.push(cur.to_lowercase());
    }
    out
}

/// Longest run of a value's words spelled as one identifier (keeps the work linear in the value).
const MAX_RUN: usize = 4;

/// The ways code spells a value or a run of two to four of its words (`maxRetries` for
/// `opa.max-retries`): camelCase, PascalCase, snake_case, SCREAMING_SNAKE, kebab-case, joined; a
/// one-word value also as written, lowercase, Capitalised and UPPERCASE. Forms shorter than
/// three characters say too little to count.
fn spellings(v: &str) -> Vec<String> {
    let w = words(v);
    let runs: Vec<&[String]> = if w.len() == 1 {
        vec![&w[..]]
    } else {
        (0..w.len())
            .flat_map(|i| (i + 2..=w.len().min(i + MAX_RUN)).map(move |j| (i, j)))
            .map(|(i, j)| &w[i..j])
            .collect()
    };
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        out.extend(forms(r));
    }
    out.retain(|f| f.chars().count() >= 3);
    out.sort();
    out.dedup();
    out
}

/// The ways code spells a run of words (at least one), in a fixed order: camelCase, PascalCase,
/// snake_case, SCREAMING_SNAKE, kebab-case, joined. Two runs' forms pair up form by form.
pub(super) fn forms(r: &[String]) -> [String; 6] {
    let cap = |s: &str| {
        let mut c = s.chars();
        c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
    };
    let (first, rest) = r.split_first().map_or(("", &[][..]), |(f, rest)| (f.as_str(), rest));
    [
        first.to_string() + &rest.iter().map(|x| cap(x)).collect::<String>(),
        r.iter().map(|x| cap(x)).collect(),
        r.join("_"),
        r.join("_").to_uppercase(),
        r.join("-"),
        r.concat(),
    ]
}

/// Whether `form` occurs as a word or as the head of an identifier (`check` in `checkCmd`, not
/// in `checker` or `recheck`).
fn occurs(text: &str, form: &str) -> bool {
    text.match_indices(form).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + form.len()..].chars().next();
        let starts = form.starts_with(char::is_uppercase) || !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let ends = !after.is_some_and(|c| c.is_lowercase() || c.is_ascii_digit());
        starts && ends
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::template::{Slot, Step};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn filled(step: &str, slot: &str, new: &str) -> Filled {
        Filled {
            values: BTreeMap::from([(slot.to_string(), json!(new))]),
            sources: BTreeMap::new(),
            missing: vec![],
            steps: vec![serde_json::from_value::<Step>(json!({"tool": "todo", "inputs": {"text": step}})).unwrap()],
        }
    }

    fn template(slot: &str, old: &str) -> PlanTemplate {
        let mut s = Slot::required(slot.to_string(), crate::plan::params::ParamKind::Any);
        s.example = Some(old.to_string());
        PlanTemplate { steps: vec![], slots: vec![s], outputs: vec![], description: None, version: "1".into() }
    }

    #[test]
    fn another_spelling_of_the_stored_value_is_stale() {
        let t = template("name", "max-retries");
        let why = stale(&t, &filled("Add maxRetries (int) and set page-size", "name", "page-size")).unwrap();
        assert!(why.contains("maxRetries"), "{why}");
        let t = template("name", "check");
        assert!(stale(&t, &filled("checkCmd.Flags() on list", "name", "list")).is_some());
        let t = template("name", "opa.max-retries");
        let why = stale(&t, &filled("Add maxRetries to AppProperties", "name", "app.page-size")).unwrap();
        assert!(why.contains("maxRetries"), "{why}");
        assert_eq!(stale(&t, &filled("Add pageSize to AppProperties", "name", "app.page-size")), None);
    }

    #[test]
    fn a_stored_value_of_several_words_left_as_written_is_stale_even_inside_a_pattern() {
        let t = template("old", "run_server");
        let why = stale(&t, &filled(r"rg -n '\brun_server\b' src", "old", "parse_args")).unwrap();
        assert!(why.contains("run_server"), "{why}");
        assert_eq!(stale(&t, &filled(r"rg -n '\bparse_args\b' src", "old", "parse_args")), None);
        let t = template("path", "src/app.rs");
        assert!(stale(&t, &filled("cargo fmt -- src/app.rs.bak", "path", "lib/main.rs")).is_some());
    }

    #[test]
    fn verbatim_warns_of_a_stored_value_even_inside_a_longer_word() {
        let t = template("name", "check");
        let why = verbatim(&t, &filled("run recheck on list", "name", "list")).unwrap();
        assert!(why.contains("`check`") && why.contains("`list`"), "{why}");
        assert_eq!(verbatim(&t, &filled("run list", "name", "list")), None);
        assert_eq!(verbatim(&t, &filled("run check", "name", "check")), None, "same value");
    }

    #[test]
    fn the_new_value_and_longer_words_are_not_stale() {
        let t = template("name", "check");
        assert_eq!(stale(&t, &filled("listCmd.Flags() on list, then recheck the checker", "name", "list")), None);
        assert_eq!(stale(&t, &filled("run check-all", "name", "check-all")), None);
        let t = template("name", "max-retries");
        assert_eq!(stale(&t, &filled("Add pageSize for page-size", "name", "page-size")), None);
        assert_eq!(stale(&t, &filled("Add maxRetries", "name", "max-retries")), None, "same value");
    }

    #[test]
    fn words_split_at_case_and_punctuation() {
        assert_eq!(words("opa.max-retries"), ["opa", "max", "retries"]);
        assert_eq!(words("getUserById"), ["get", "user", "by", "id"]);
        assert!(spellings("max-retries").contains(&"MAX_RETRIES".to_string()));
    }
}
