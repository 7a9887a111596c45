//! The compact head of a stored plan: all that lookup's cheap gates read (the masked task, where
//! each slot's value stood in it, the values that are fixed, tool families, side effects,
//! quarantine and the feedback bias). The full record (the steps) is read only for candidates
//! that pass every gate and the verifier.
//!
//! Heads are derived data: rebuilt from the record when missing or made by an older masker.

use super::key::IntentKey;
use super::mask::{self, Masked};
use super::params::{ParamKind, Role, role_before};
use super::template::StoredPlan;
use super::words::tokens;
use serde::{Deserialize, Serialize};

/// Version of the head layout and of the masking it was built with; heads of another version are
/// rebuilt from their record on read.
pub const HEAD_VERSION: u32 = 3;

/// What lookup knows of a plan before reading it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Head {
    /// `HEAD_VERSION` when built.
    pub version: u32,
    /// Plan id.
    pub id: String,
    /// The intent key it is stored under (provenance only, never a gate).
    pub key: IntentKey,
    /// The task it was stored for.
    pub task: String,
    /// That task with its values masked.
    pub masked: String,
    /// The task's tokens, lowercase, values as their placeholders.
    pub words: Vec<String>,
    /// The template's slots and where their values stood in the task.
    pub slots: Vec<HeadSlot>,
    /// Values of the task that are no slot: the plan is only for tasks that say them too.
    pub constants: Vec<String>,
    /// Tool families the steps need.
    pub families: Vec<String>,
    /// Programs the plan's commands run that the task names ("with pnpm"): the plan is only for
    /// tasks that name them too (a yarn task is no pnpm task, however alike they read).
    #[serde(default)]
    pub programs: Vec<String>,
    /// Whether any step has side effects.
    pub side_effects: bool,
    /// Why the plan is quarantined, if it is.
    pub quarantined: Option<String>,
    /// The feedback bias on the verifier's threshold.
    pub bias: f32,
    /// Its task vector in the index.
    pub vector: Option<u64>,
}

/// A slot as lookup sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadSlot {
    /// Slot name.
    pub name: String,
    /// Its type.
    pub kind: ParamKind,
    /// A lookup without a value for it is a miss.
    pub required: bool,
    /// It has a default value.
    pub default: bool,
    /// The preposition before its value ("to", "from", "in").
    pub role: Option<Role>,
    /// Index in `words` of its value in the stored task, when the task says it.
    pub at: Option<usize>,
    /// Its value in the stored task.
    pub example: Option<String>,
}

impl Head {
    /// Builds the head of a plan.
    pub fn of(plan: &StoredPlan, vector: Option<u64>) -> Head {
        let task = &plan.provenance.task;
        let examples: Vec<String> = plan.template.slots.iter().filter_map(|s| s.example.clone()).collect();
        let m = mask::mask_known(task, &examples);
        let toks = tokens(task, &m.spans);
        let value_at = |span: usize| toks.iter().position(|t| t.value == Some(span));
        let mut taken = vec![false; m.spans.len()];
        let mut slots: Vec<HeadSlot> = plan
            .template
            .slots
            .iter()
            .map(|s| HeadSlot {
                name: s.name.clone(),
                kind: s.kind,
                required: s.required,
                default: s.default.is_some(),
                role: s.role,
                at: None,
                example: s.example.clone(),
            })
            .collect();
        // Slots that know their value take its first occurrence.
        for slot in slots.iter_mut() {
            let Some(ex) = slot.example.as_deref() else { continue };
            let found = m.spans.iter().position(|sp| sp.value == ex).or_else(|| {
                m.spans.iter().position(|sp| sp.value.eq_ignore_ascii_case(ex) || sp.value.trim_matches('`') == ex)
            });
            if let Some(i) = found {
                taken[i] = true;
                slot.at = value_at(i);
                slot.role = slot.role.or_else(|| role_before(&task[..m.spans[i].start]));
            }
        }
        link_by_type(task, &m, &mut slots, &mut taken, &value_at);
        let linked: Vec<String> =
            slots.iter().filter_map(|s| s.at.and_then(|a| toks.get(a)).map(|t| value_text(&m, t.value))).collect();
        let mut constants: Vec<String> = Vec::new();
        for (i, sp) in m.spans.iter().enumerate() {
            let same_as_slot = linked.iter().any(|l| l.eq_ignore_ascii_case(&sp.value));
            if !taken[i] && !same_as_slot && !constants.iter().any(|c| c.eq_ignore_ascii_case(&sp.value)) {
                constants.push(sp.value.clone());
            }
        }
        for w in said_by_commands(plan, &toks) {
            if !constants.iter().any(|c| c.eq_ignore_ascii_case(&w)) {
                constants.push(w);
            }
        }
        let mut families: Vec<String> = plan.template.steps.iter().filter_map(|s| s.family.clone()).collect();
        families.sort();
        families.dedup();
        Head {
            version: HEAD_VERSION,
            id: plan.id.clone(),
            key: plan.key.clone(),
            task: task.clone(),
            masked: m.text.clone(),
            words: toks.iter().map(|t| t.lower.clone()).collect(),
            slots,
            constants,
            families,
            programs: programs(plan, &toks),
            side_effects: plan.template.steps.iter().any(|s| s.side_effect),
            quarantined: plan.quarantined.clone(),
            bias: plan.counters.bias,
            vector,
        }
    }
}

/// The programs the plan's commands start with (past `sudo` and `VAR=x`) that the task names as
/// a word of its own.
fn programs(plan: &StoredPlan, toks: &[super::words::Token]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for step in &plan.template.steps {
        let Some(cmd) = step.inputs.get("command").and_then(|c| c.as_str()).or_else(|| step.inputs.as_str()) else {
            continue;
        };
        for part in cmd.split(['|', ';', '&']) {
            let program = program_of(part);
            let named = toks.iter().any(|t| t.value.is_none() && t.lower == program);
            if program.chars().count() >= 2 && !program.contains("{{") && named && !out.contains(&program) {
                out.push(program);
            }
        }
    }
    out
}

/// The program a command runs (past `sudo` and `VAR=x`), lowercase, without its directory.
fn program_of(part: &str) -> String {
    let program = part.split_whitespace().find(|w| *w != "sudo" && !w.contains('=')).unwrap_or("");
    program.rsplit('/').next().unwrap_or("").to_lowercase()
}

/// Plain words of the task that the plan's commands say too ("closed" in "list the closed issues
/// opened by octocat" for `gh issue ls -s closed -A {{params.user}}`, "tcp" for `dig +tcp`):
/// they are what the plan does, not values, so the plan is only for tasks that say them too.
fn said_by_commands(plan: &StoredPlan, toks: &[super::words::Token]) -> Vec<String> {
    let mut said: Vec<String> = Vec::new();
    for step in &plan.template.steps {
        let Some(cmd) = step.inputs.get("command").and_then(|c| c.as_str()).or_else(|| step.inputs.as_str()) else {
            continue;
        };
        // The programs themselves are `programs`: a task may leave them unsaid.
        let run: Vec<String> = cmd.split(['|', ';', '&']).map(program_of).collect();
        let words: Vec<String> = without_placeholders(cmd)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .filter(|w| !run.contains(w))
            .collect();
        for t in toks {
            let plain = t.value.is_none()
                && t.lower.chars().all(char::is_alphabetic)
                && !super::lexicon::STOPWORDS.contains(&t.lower.as_str());
            if plain && words.contains(&t.lower) && !said.contains(&t.lower) {
                said.push(t.lower.clone());
            }
        }
    }
    said
}

/// A command with its `{{...}}` placeholders blanked out.
fn without_placeholders(cmd: &str) -> String {
    let mut out = String::with_capacity(cmd.len());
    let mut rest = cmd;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        out.push(' ');
        match rest[open..].find("}}") {
            Some(close) => rest = &rest[open + close + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

fn value_text(m: &Masked, span: Option<usize>) -> String {
    span.and_then(|i| m.spans.get(i)).map(|s| s.value.clone()).unwrap_or_default()
}

/// Slots without a known value take the task's values of their type, in order; a slot with a
/// role prefers a value in that role, and values the typed tables found (backticks, quotes,
/// paths, versions) come before names guessed by shape or place.
fn link_by_type(
    task: &str,
    m: &Masked,
    slots: &mut [HeadSlot],
    taken: &mut [bool],
    value_at: &impl Fn(usize) -> Option<usize>,
) {
    let typed: Vec<usize> = mask::typed_spans(task).iter().map(|s| s.start).collect();
    for (with_role, typed_only) in [(true, true), (true, false), (false, true), (false, false)] {
        for slot in slots.iter_mut() {
            if slot.at.is_some() || slot.example.is_some() || slot.kind == ParamKind::Any {
                continue;
            }
            if with_role && slot.role.is_none() {
                continue;
            }
            let pick = m.spans.iter().enumerate().find(|(i, sp)| {
                !taken[*i]
                    && (!typed_only || typed.contains(&sp.start))
                    && same_class(slot.kind, sp.kind)
                    && slot.kind.accepts(&sp.value)
                    && (!with_role || role_before(&task[..sp.start]) == slot.role)
            });
            if let Some((i, sp)) = pick {
                taken[i] = true;
                slot.at = value_at(i);
                slot.example = Some(sp.value.clone());
            }
        }
    }
}

/// Types that stand for the same kind of value (a package and an identifier are both names).
pub fn same_class(a: ParamKind, b: ParamKind) -> bool {
    class(a) == class(b)
}

/// The placeholder class of a type.
pub fn class(k: ParamKind) -> &'static str {
    mask::placeholder(match k {
        ParamKind::Package => ParamKind::Identifier,
        ParamKind::Version => ParamKind::Number,
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::template::*;
    use serde_json::json;

    fn plan(task: &str, template: serde_json::Value) -> StoredPlan {
        let template: PlanTemplate = serde_json::from_value(template).unwrap();
        StoredPlan::for_test(task, IntentKey::new("add", "flag"), template)
    }

    #[test]
    fn template_slots_link_to_the_task_values_by_type_and_the_rest_is_fixed() {
        let p = plan(
            "add a `--verbose` flag to src/main.rs in release mode",
            json!({"steps": [{"tool": "Edit", "inputs": {"f": "{{params.path}} {{params.flag}}"}, "family": "fs", "side_effect": true}],
                   "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}]}),
        );
        let h = Head::of(&p, None);
        assert_eq!(h.masked, "add a <flag> flag to <path> in release mode");
        assert_eq!(h.slots[0].at.map(|a| h.words[a].as_str()), Some("<flag>"));
        assert_eq!(h.slots[1].example.as_deref(), Some("src/main.rs"));
        assert!(h.constants.is_empty(), "{:?}", h.constants);
        assert_eq!((h.families.clone(), h.side_effects), (vec!["fs".to_string()], true));
    }

    #[test]
    fn examples_anchor_slots_and_unused_values_are_constants() {
        let p = plan(
            "add a dependency on regex version 1.10 in crates/core",
            json!({"steps": [{"tool": "Bash", "inputs": "cargo add {{params.package}}@{{params.version}}"}],
                   "slots": [{"name": "package", "type": "identifier", "example": "regex"},
                             {"name": "version", "type": "version", "example": "1.10"}]}),
        );
        let h = Head::of(&p, None);
        assert_eq!(h.masked, "add a dependency on <name> version <version> in <path>");
        // `add` is what `cargo add` does: a task that does not say it is another task.
        assert_eq!(h.constants, vec!["crates/core".to_string(), "add".to_string()]);
        assert_eq!(h.slots[0].at, Some(4));
    }

    #[test]
    fn words_the_command_says_are_fixed_and_placeholders_say_nothing() {
        let p = plan(
            "List the closed issues opened by octocat over tcp",
            json!({"steps": [{"tool": "Bash", "inputs": {"command": "gh issue ls -s closed -A {{params.issues}} +tcp"}}],
                   "slots": [{"name": "issues", "type": "string"}]}),
        );
        assert_eq!(Head::of(&p, None).constants, vec!["closed".to_string(), "tcp".to_string()]);
    }
}
