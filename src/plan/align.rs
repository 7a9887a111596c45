//! Slot filling by alignment: the stored task's slots take their values from spans of the new
//! task, chosen by type and by the words around each value in both texts ("on <name> version"
//! and "add <name> <version>": the name before the version is the crate), with prepositions
//! ("to", "from") and order breaking ties. A plain word of the new task can fill a name slot only
//! where its neighbours match the slot's neighbours, so a paraphrase's extra words are no values.
//!
//! Context values from the caller win; slots the stored task never said take values of their
//! type in order; defaults come last.

use super::head::{Head, class};
use super::mask::{self, Masked};
use super::names;
use super::params::{ParamKind, Role, role_before};
use super::words::{Token, tokens};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// A new task, masked and tokenised once per lookup.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// The text.
    pub text: String,
    /// Its values.
    pub masked: Masked,
    /// Its tokens.
    pub tokens: Vec<Token>,
}

impl NewTask {
    /// Masks and tokenises a task.
    pub fn new(text: &str) -> NewTask {
        let masked = mask::mask(text);
        let tokens = tokens(text, &masked.spans);
        NewTask { text: text.to_string(), masked, tokens }
    }

    /// The values of the task (token indexes of value tokens).
    pub fn value_tokens(&self) -> impl Iterator<Item = usize> + '_ {
        self.tokens.iter().enumerate().filter(|(_, t)| t.value.is_some()).map(|(i, _)| i)
    }

    /// The value a token stands for (the span's value, or the word).
    pub fn value_of(&self, token: usize) -> String {
        let t = &self.tokens[token];
        t.value.and_then(|v| self.masked.spans.get(v)).map(|s| s.value.clone()).unwrap_or_else(|| t.text.clone())
    }

    /// Whether a token is an extension the task wrote as a glob (`*.log`: the value is `.log`,
    /// the star stayed text).
    pub fn starred_extension(&self, token: usize) -> bool {
        let Some(span) = self.tokens.get(token).and_then(|t| t.value).and_then(|v| self.masked.spans.get(v)) else {
            return false;
        };
        span.value.starts_with('.') && self.text[..span.start].ends_with('*')
    }
}

/// Where a slot's value came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The caller's context.
    Context(Value),
    /// A token of the new task.
    Task(usize),
    /// The slot's default.
    Default,
    /// The stored task's own value (the same text asked again).
    Stored(Value),
}

/// The slots of one stored plan filled from one new task.
#[derive(Debug, Clone, PartialEq)]
pub struct Alignment {
    /// Per slot (in the head's order), where its value comes from.
    pub sources: Vec<Option<Source>>,
    /// Required slots nobody could fill.
    pub missing: Vec<String>,
    /// Words of the stored task found to be a slot's value by substitution (masked in the
    /// stored text when the two are compared).
    pub stored_values: Vec<String>,
}

impl Alignment {
    /// New-task tokens that fill a slot.
    pub fn used_tokens(&self) -> HashSet<usize> {
        self.sources
            .iter()
            .filter_map(|s| match s {
                Some(Source::Task(t)) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// The stored task masked as it is compared with this new task: its values, and the words
    /// the alignment found to be values of slots the stored task did not mark.
    pub fn masked_stored(&self, head: &Head) -> String {
        let mut out = head.masked.clone();
        for w in &self.stored_values {
            let lower = out.to_lowercase();
            if let Some((i, _)) =
                lower.match_indices(w.as_str()).find(|(i, _)| mask::whole_word(&lower, *i, i + w.len()))
                && out.is_char_boundary(i)
                && out.is_char_boundary(i + w.len())
            {
                out.replace_range(i..i + w.len(), "<name>");
            }
        }
        out
    }

    /// The new task masked as the stored task is: its values and the words that fill slots.
    pub fn masked_new(&self, new: &NewTask) -> String {
        let mut spans = new.masked.spans.clone();
        for t in self.used_tokens() {
            let tok = &new.tokens[t];
            if tok.value.is_none() {
                spans.push(super::params::Span {
                    start: tok.start,
                    end: tok.end,
                    kind: ParamKind::Identifier,
                    value: tok.text.clone(),
                });
            }
        }
        spans.sort_by_key(|s| s.start);
        mask::render(&new.text, &spans)
    }
}

/// Fills the slots of `head` from `new` (and the caller's `context`).
pub fn align(head: &Head, new: &NewTask, context: &Map<String, Value>) -> Alignment {
    let mut sources: Vec<Option<Source>> = vec![None; head.slots.len()];
    let mut used: HashSet<usize> = HashSet::new();
    for (i, slot) in head.slots.iter().enumerate() {
        if let Some(v) = context.get(&slot.name) {
            sources[i] = Some(Source::Context(v.clone()));
            if let Some(s) = v.as_str()
                && let Some(t) = new.value_tokens().find(|t| new.value_of(*t) == s)
            {
                used.insert(t);
            }
        }
    }
    let stored: HashSet<&str> = head.words.iter().map(String::as_str).collect();
    let mut pairs: Vec<(f32, usize, usize)> = Vec::new();
    for (si, slot) in head.slots.iter().enumerate() {
        let Some(at) = slot.at.filter(|_| sources[si].is_none()) else { continue };
        for (ti, tok) in new.tokens.iter().enumerate() {
            if let Some(score) = score(head, at, slot.kind, slot.role, new, ti, tok, &stored) {
                pairs.push((score, si, ti));
            }
        }
    }
    // Best pairs first; ties go to the earlier slot and token, so the result is deterministic.
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    for (_, si, ti) in pairs {
        if sources[si].is_none() && !used.contains(&ti) {
            sources[si] = Some(Source::Task(ti));
            used.insert(ti);
        }
    }
    // Slots the stored task did not mark: a word of the new task standing where a word of the
    // stored task stood (same neighbours on both sides), else values of their type, in order.
    let mut stored_values = Vec::new();
    for (si, slot) in head.slots.iter().enumerate() {
        if sources[si].is_some() || slot.at.is_some() {
            continue;
        }
        if is_name_slot(slot.kind)
            && let Some((a, t)) = substitution(head, new, &stored, &used)
        {
            sources[si] = Some(Source::Task(t));
            used.insert(t);
            stored_values.push(head.words[a].clone());
            continue;
        }
        if slot.kind == ParamKind::Any {
            continue;
        }
        let pick = new.value_tokens().find(|t| {
            !used.contains(t)
                && new.tokens[*t].value.and_then(|v| new.masked.spans.get(v)).is_some_and(|sp| {
                    slot.kind.accepts(&sp.value)
                        && (class(sp.kind) == class(slot.kind) || compatible(slot.kind, sp.kind))
                })
        });
        if let Some(t) = pick {
            sources[si] = Some(Source::Task(t));
            used.insert(t);
        }
    }
    let mut missing = Vec::new();
    for (si, slot) in head.slots.iter().enumerate() {
        if sources[si].is_none() {
            if slot.default {
                sources[si] = Some(Source::Default);
            } else if slot.required {
                missing.push(slot.name.clone());
            }
        }
    }
    Alignment { sources, missing, stored_values }
}

/// The slots of `head` filled with the stored task's own values, when `new` is the stored task's
/// own text (same words, case and spacing aside): a task asked again word for word is served
/// its plan exactly as it was stored, whatever the alignment would guess (values the caller
/// passes in `context` still win). None for another text.
pub fn own(head: &Head, new: &NewTask, context: &Map<String, Value>) -> Option<Alignment> {
    if mask::canonical(&head.task) != mask::canonical(&new.text) {
        return None;
    }
    let same_tokens =
        head.words.len() == new.tokens.len() && head.words.iter().zip(&new.tokens).all(|(w, t)| *w == t.lower);
    let mut sources = Vec::with_capacity(head.slots.len());
    let mut missing = Vec::new();
    for slot in &head.slots {
        let src = match (slot.at, &slot.example) {
            _ if context.contains_key(&slot.name) => context.get(&slot.name).cloned().map(Source::Context),
            (Some(at), _) if same_tokens && new.tokens[at].value.is_some() => Some(Source::Task(at)),
            (_, Some(v)) => Some(Source::Stored(Value::String(v.clone()))),
            _ if slot.default => Some(Source::Default),
            _ => None,
        };
        if src.is_none() && slot.required {
            missing.push(slot.name.clone());
        }
        sources.push(src);
    }
    Some(Alignment { sources, missing, stored_values: Vec::new() })
}

/// Longest task (in words) in which substitutions are looked for.
const MAX_SUBSTITUTION_WORDS: usize = 256;

/// A plain word of the stored task replaced by a plain word of the new task with the same
/// neighbours on both sides ("of puma matching" / "of rspec matching"): (stored index, new index).
fn substitution(head: &Head, new: &NewTask, stored: &HashSet<&str>, used: &HashSet<usize>) -> Option<(usize, usize)> {
    // Quadratic in the two lengths: tasks are short, and a huge one simply gets no substitution.
    if head.words.len() > MAX_SUBSTITUTION_WORDS || new.tokens.len() > MAX_SUBSTITUTION_WORDS {
        return None;
    }
    let new_words: HashSet<&str> = new.tokens.iter().map(|t| t.lower.as_str()).collect();
    let n = head.words.len();
    // Never the first word: where a task starts is its action ("Kill the socket connections to
    // <ip>" is not "Show the socket connections to <ip>"), not a value.
    (1..n).find_map(|a| {
        let w = head.words[a].as_str();
        if w.starts_with('<') || new_words.contains(w) || !names::plain_word(w) {
            return None;
        }
        let t = (1..new.tokens.len()).find(|&t| {
            let tok = &new.tokens[t];
            tok.value.is_none()
                && !used.contains(&t)
                && names::plain(tok)
                && !stored.contains(tok.lower.as_str())
                && a.checked_sub(1).map(|i| head.words[i].as_str())
                    == t.checked_sub(1).map(|i| new.tokens[i].lower.as_str())
                && head.words.get(a + 1).map(String::as_str) == new.tokens.get(t + 1).map(|x| x.lower.as_str())
        })?;
        Some((a, t))
    })
}

/// How well token `ti` of the new task fits the slot whose value stood at `at` in the stored
/// task; None when it cannot fill it.
#[allow(clippy::too_many_arguments)]
fn score(
    head: &Head,
    at: usize,
    kind: ParamKind,
    role: Option<Role>,
    new: &NewTask,
    ti: usize,
    tok: &Token,
    stored: &HashSet<&str>,
) -> Option<f32> {
    let base = match tok.value.and_then(|v| new.masked.spans.get(v)) {
        Some(sp) if class(sp.kind) == class(kind) && kind.accepts(&sp.value) => 3.0,
        Some(sp) if kind == ParamKind::Any || (kind.accepts(&sp.value) && compatible(kind, sp.kind)) => 1.5,
        Some(_) => return None,
        // A plain word only for a name, and only if the stored task does not have it too.
        None if is_name_slot(kind) && names::plain(tok) && !stored.contains(tok.lower.as_str()) => 0.5,
        None => return None,
    };
    let near = |d: isize| {
        let s = at.checked_add_signed(d).and_then(|i| head.words.get(i));
        let n = ti.checked_add_signed(d).and_then(|i| new.tokens.get(i)).map(|t| &t.lower);
        s.is_some() && s == n
    };
    let mut ctx = 0.0;
    if near(-1) {
        ctx += 2.0;
    }
    if near(1) {
        ctx += 2.0;
    }
    if near(-2) {
        ctx += 0.5;
    }
    if near(2) {
        ctx += 0.5;
    }
    if tok.value.is_none() && ctx < 2.0 {
        return None;
    }
    let mut s = base + ctx;
    if role.is_some() && role_before(&new.text[..tok.start]) == role {
        s += 1.0;
    }
    // Order breaks ties: a value where the stored one stood (relative position) fits better.
    let rel = |i: usize, n: usize| i as f32 / n.max(1) as f32;
    s -= 0.25 * (rel(at, head.words.len()) - rel(ti, new.tokens.len())).abs();
    Some(s)
}

/// Slots a name (a plain word) can fill.
fn is_name_slot(kind: ParamKind) -> bool {
    matches!(kind, ParamKind::Identifier | ParamKind::Package | ParamKind::String | ParamKind::Any)
}

/// Types close enough to fill each other (a quoted string where a name was, a number where a
/// version was).
fn compatible(slot: ParamKind, value: ParamKind) -> bool {
    use ParamKind::*;
    matches!(
        (slot, value),
        (Identifier | Package, String | Identifier | Package)
            | (String, Identifier | Package | Path)
            | (Version, Number)
            | (Number, Version)
            | (Issue | Pr, Number)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::head::Head;
    use crate::plan::key::IntentKey;
    use crate::plan::template::*;
    use serde_json::json;

    fn head(task: &str, slots: serde_json::Value) -> Head {
        let template: PlanTemplate =
            serde_json::from_value(json!({"steps": [{"tool": "Bash", "inputs": "x"}], "slots": slots})).unwrap();
        Head::of(&StoredPlan::for_test(task, IntentKey::new("add", "x"), template), None)
    }

    fn filled(h: &Head, task: &str) -> Vec<Option<String>> {
        let new = NewTask::new(task);
        let a = align(h, &new, &Map::new());
        a.sources
            .iter()
            .map(|s| match s {
                Some(Source::Task(t)) => Some(new.value_of(*t)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_crate_and_its_version_are_found_in_another_order() {
        let h = head(
            "add a dependency on regex version 1.10",
            json!([{"name": "package", "type": "identifier", "example": "regex"},
                   {"name": "version", "type": "version", "example": "1.10"}]),
        );
        assert_eq!(filled(&h, "add serde 1.0.200 as a dependency"), [Some("serde".into()), Some("1.0.200".into())]);
        assert_eq!(filled(&h, "add a dependency on tokio version 1.41"), [Some("tokio".into()), Some("1.41".into())]);
    }

    #[test]
    fn old_and_new_names_keep_their_places() {
        let h = head(
            "rename fn run_server to serve",
            json!([{"name": "old", "type": "identifier", "example": "run_server"},
                   {"name": "new", "type": "identifier", "example": "serve"}]),
        );
        assert_eq!(filled(&h, "rename fn start to launch"), [Some("start".into()), Some("launch".into())]);
        assert_eq!(
            filled(&h, "rename the function handle_request to process"),
            [Some("handle_request".into()), Some("process".into())]
        );
    }

    #[test]
    fn hostile_tasks_align_without_panicking() {
        let h = head(
            "rename fn run_server to serve in src/a.rs",
            json!([{"name": "old", "type": "identifier", "example": "run_server"},
                   {"name": "new", "type": "identifier"}, {"name": "p", "type": "path"}]),
        );
        let huge = "rename fn a_b to c ".repeat(2000);
        for task in
            ["", " ", "`", "\u{0}", "🙂 é `ü` 日本語 --x 1.2.3", "to to to to", huge.as_str(), "rename fn `` to ''"]
        {
            let new = NewTask::new(task);
            let a = align(&h, &new, &Map::new());
            let _ = (a.masked_new(&new), a.masked_stored(&h), crate::plan::coverage::check(&h, &new, &a));
        }
    }

    #[test]
    fn a_word_where_the_stored_value_stood_fills_an_unmarked_slot() {
        let h = head(
            "Install the latest version of puma matching 6.4",
            json!([{"name": "gem", "type": "string"}, {"name": "v", "type": "number"}]),
        );
        let new = NewTask::new("Install the latest version of rspec matching 3.13");
        let a = align(&h, &new, &Map::new());
        assert_eq!(a.masked_stored(&h), "Install the latest version of <name> matching <version>");
        assert_eq!(
            filled(&h, "Install the latest version of rspec matching 3.13"),
            [Some("rspec".into()), Some("3.13".into())]
        );
    }

    #[test]
    fn paraphrase_words_fill_nothing_and_missing_values_are_reported() {
        let h = head(
            "find files modified more than 30 days ago in /var/log",
            json!([{"name": "number", "type": "number", "example": "30"},
                   {"name": "path", "type": "path", "example": "/var/log"}]),
        );
        assert_eq!(
            filled(&h, "list files in src changed over 7 days ago"),
            [Some("7".into()), None],
            "`src` is a plain word with no neighbour in common with the stored path"
        );
        let a = align(&h, &NewTask::new("find files modified more than 7 days ago"), &Map::new());
        assert_eq!(a.missing, vec!["path".to_string()]);
    }

    fn own_values(h: &Head, task: &str) -> Option<Vec<Option<String>>> {
        let new = NewTask::new(task);
        let a = own(h, &new, &Map::new())?;
        Some(
            a.sources
                .iter()
                .map(|s| match s {
                    Some(Source::Task(t)) => Some(new.value_of(*t)),
                    Some(Source::Stored(v)) => v.as_str().map(str::to_string),
                    _ => None,
                })
                .collect(),
        )
    }

    #[test]
    fn the_stored_text_asked_again_takes_its_own_values() {
        let h = head(
            "Find directories under /usr whose name matches *lib*, ignoring case",
            json!([{"name": "directory", "type": "path"}, {"name": "lib", "type": "string"}]),
        );
        let values = vec![Some("/usr".to_string()), Some("*lib*".to_string())];
        let want = Some(values.clone());
        assert_eq!(own_values(&h, "Find directories under /usr whose name matches *lib*, ignoring case"), want);
        assert_eq!(own_values(&h, "  find directories under /usr whose name matches *lib*, IGNORING CASE. "), want);
        assert_eq!(filled(&h, "Find directories under /usr whose name matches *lib*, ignoring case"), values);
        assert_eq!(own_values(&h, "Find directories under /opt whose name matches *lib*, ignoring case"), None);
        // "matching build": the pattern is a name, the value of a name slot.
        let h = head("Find only directories matching build", json!([{"name": "regex", "type": "identifier"}]));
        assert_eq!(own_values(&h, "Find only directories matching build"), Some(vec![Some("build".to_string())]));
        // A slot whose value the stored text never showed has nothing to be filled with.
        let h = head("Show what is listening on the usual port", json!([{"name": "port", "type": "number"}]));
        let a = own(&h, &NewTask::new("Show what is listening on the usual port"), &Map::new()).unwrap();
        assert_eq!(a.missing, vec!["port".to_string()]);
        // Values the caller passes still win.
        let ctx: Map<String, Value> = [("port".to_string(), json!("3000"))].into_iter().collect();
        let a = own(&h, &NewTask::new("Show what is listening on the usual port"), &ctx).unwrap();
        assert_eq!(a.sources, vec![Some(Source::Context(json!("3000")))]);
    }
}
