//! Accepting a suggestion: the agent judged a suggested plan's stored task to be its own kind of
//! task, so refrain neither retrieves nor verifies. It loads that plan from this project's
//! library, fills its slots from the task and the caller's context by the alignment a hit uses,
//! validates it against the caller's caps as a hit is validated, and returns the steps, or the
//! slots it could not fill (never guessed) for the agent to give in `context`. When a value gate
//! doubts the fill (`caution`: a value of the task with no place in the plan, a stored value still
//! in the steps), the slots the agent did not give are asked for too, each with refrain's guess:
//! on the coding families' development split, such fills were wrong 129 times in 131.
//! A plain word of the stored task the steps still say and the new task does not (`kept`) is
//! named: in `kept` when nothing else is in doubt, else asked for too, named by itself. A value
//! the agent gives for it is written where it stood.
//!
//! Never a hit: no hit counter, no hit stamp on the plan; `suggestions_accepted` (or
//! `accepts_need_values`) counts it.

use super::Error;
use super::align::{NewTask, align, own};
use super::coverage;
use super::fill::{SlotSource, fill_aligned, placeholders};
use super::head::{Head, HeadSlot};
use super::intake::check_task;
use super::kept;
use super::library;
use super::respell::respell;
use super::spelling;
use super::template::{Counters, Step};
use super::validate::{RuntimeCaps, StageResult, validate};
use crate::app::App;
use crate::stats;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A suggested plan the agent accepted, filled with its task's values.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Accepted {
    /// The plan id (report how it went with plan_feedback, `accepted: true`).
    pub plan_id: String,
    /// The task the plan was stored for, as written.
    pub task: String,
    /// The steps with every slot refrain could fill filled. While `unfilled` is not empty do not
    /// follow them yet: they still hold `{{params.<name>}}` placeholders, or guesses.
    pub steps: Vec<Step>,
    /// Slot values.
    pub values: BTreeMap<String, Value>,
    /// Where each value came from.
    pub sources: BTreeMap<String, SlotSource>,
    /// Slots no value was found for, or whose value refrain doubts (with its `guess`), and words
    /// of the stored task the steps still say (`kind` "word"): call plan_lookup again with the
    /// same `task` and `plan_id` and each one's value in `context` (`{"<name>": "<value>"}`).
    pub unfilled: Vec<Unfilled>,
    /// What a value gate noticed (a value of your task with no place in the plan, a fixed value
    /// of the plan your task does not say, a stored value still spelt in the steps): check those
    /// steps before following them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caution: Option<String>,
    /// Words of the stored task the steps keep and your task does not say (named in `caution`):
    /// if yours differ, call again with `{"<word>": "<yours>"}` in `context`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Every validation stage.
    pub stages: Vec<StageResult>,
    /// Outputs the plan produces.
    pub outputs: Vec<String>,
    /// The plan's counters.
    pub counters: Counters,
}

/// A slot the task gave no value for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Unfilled {
    /// Slot name: the key to give in `context`.
    pub name: String,
    /// The value's type (`path`, `identifier`, `version`...), or `word` for a word of the stored
    /// task.
    pub kind: String,
    /// The value it had in the stored task, as an example of what it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// The value refrain would fill, when it found one but doubts it (`caution`): give it back
    /// in `context` if it is right, or the right one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess: Option<Value>,
}

impl Unfilled {
    /// A slot of the plan to ask for, with refrain's guess when it has one.
    fn of(s: &HeadSlot, guess: Option<Value>) -> Unfilled {
        Unfilled { name: s.name.clone(), kind: s.kind.name().to_string(), example: s.example.clone(), guess }
    }

    /// A word of the stored task the steps still say (`kept`), named by itself.
    fn word(w: String) -> Unfilled {
        Unfilled { name: w.clone(), kind: "word".to_string(), example: Some(w.clone()), guess: Some(Value::String(w)) }
    }
}

/// Fills the plan `id` for `task`. `dry` records nothing.
pub fn accept(
    app: &App,
    id: &str,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
    dry: bool,
) -> Result<Accepted, Error> {
    check_task(app, task)?;
    let full = library::resolve(&app.store, id)?.ok_or_else(|| Error::NoSuchSuggestion(id.to_string()))?;
    let id = full.as_str();
    let rec = library::get(&app.store, id)?.ok_or_else(|| Error::NoSuchSuggestion(id.to_string()))?;
    if let Some(why) = super::review::Policy::of(&app.config.team).refusal_of_plan(&app.store, &rec.plan)? {
        return Err(Error::NotAccepted { id: id.to_string(), why });
    }
    if let Some(why) = &rec.plan.quarantined {
        return Err(Error::QuarantinedSuggestion { id: id.to_string(), why: why.clone() });
    }
    // Redacted as lookups do, so the values filled are the ones a hit would fill.
    let (clean, _) = crate::results::redactor().redact_str(task);
    let new = NewTask::new(&clean);
    let head = Head::of(&rec.plan, rec.vector);
    let a = own(&head, &new, context).unwrap_or_else(|| align(&head, &new, context));
    let template = &rec.plan.template;
    let mut filled = fill_aligned(template, &a, &new);
    // The agent judged the plan its task's: the stored values' other spellings take the new ones.
    respell(template, &mut filled);
    // Plain words of the stored task the agent gave a value for (a `kind: word` it was asked).
    let stored = rec.plan.provenance.task.as_str();
    let given: Vec<(String, String)> = context
        .iter()
        .filter(|(k, _)| !template.slots.iter().any(|s| &s.name == *k) && stored.contains(k.as_str()))
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect();
    kept::rewrite(&mut filled, &given);
    let stages = validate(template, &filled, caps);
    // Unfilled slots are the agent's to give; any other failing stage (a tool family or side
    // effect the caps rule out, a context value of the wrong type) is not servable as asked.
    if let Some(f) = stages.iter().find(|s| !s.ok && !matches!(s.stage, "required_slots" | "placeholders")) {
        return Err(Error::NotServable {
            id: id.to_string(),
            stage: f.stage.to_string(),
            detail: f.detail.clone().unwrap_or_default(),
        });
    }
    let mut unfilled = unfilled(&head, &filled.steps, &filled.missing);
    let stale =
        spelling::stale(template, &filled).map(|why| format!("a step may still carry the stored task's value: {why}"));
    let stale = stale.or_else(|| spelling::verbatim(template, &filled));
    let mut cautions: Vec<String> =
        coverage::check_placed(&head, &new, &a, &given).err().map(|(_, why)| why).into_iter().chain(stale).collect();
    // A doubted fill is a question, not an answer: every slot the agent did not give is asked
    // for, with the guess. Once the agent has given them all, the fill is its own.
    if !cautions.is_empty() {
        for s in head.slots.iter().filter(|s| !context.contains_key(&s.name)) {
            if !unfilled.iter().any(|u| u.name == s.name) {
                unfilled.push(Unfilled::of(s, filled.values.get(&s.name).cloned()));
            }
        }
    }
    // The stored task's own words the steps still say: a fill nothing else doubts is answered in
    // this call, with the words named; one already being asked about asks for them too, each
    // with itself as the guess.
    let words: Vec<String> =
        kept::words(stored, &clean, template, &filled).into_iter().filter(|w| !context.contains_key(w)).collect();
    let mut kept: Vec<String> = Vec::new();
    if !words.is_empty() {
        let list: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
        if cautions.is_empty() && unfilled.is_empty() {
            cautions.push(format!(
                "the steps keep {} from the stored task, which your task does not say: if yours differ, call again with them in `context` (`{{\"<word>\": \"<yours>\"}}`)",
                list.join(", ")
            ));
            kept = words;
        } else {
            cautions.push(format!(
                "the steps still say {} as the stored task did, which your task does not say: give each its value for your task, or the same word",
                list.join(", ")
            ));
            unfilled.extend(words.into_iter().map(Unfilled::word));
        }
    }
    let caution = (!cautions.is_empty()).then(|| cautions.join("; "));
    if !dry {
        let counter = if unfilled.is_empty() { "suggestions_accepted" } else { "accepts_need_values" };
        stats::bump(&app.store, "plans", counter, None, 1)?;
        // A clean fill may become an alias of the plan once the agent reports it worked.
        if unfilled.is_empty() && caution.is_none() {
            super::alias::pending(&app.store, id, &clean, context)?;
        }
    }
    Ok(Accepted {
        plan_id: rec.plan.id,
        task: rec.plan.provenance.task,
        steps: filled.steps,
        values: filled.values,
        sources: filled.sources,
        unfilled,
        caution,
        kept,
        stages,
        outputs: template.outputs.iter().map(|o| o.name.clone()).collect(),
        counters: rec.plan.counters,
    })
}

/// The required slots nobody filled and the slots whose placeholders the steps still hold, in
/// the plan's slot order.
fn unfilled(head: &Head, steps: &[Step], missing: &[String]) -> Vec<Unfilled> {
    let left: Vec<String> = steps
        .iter()
        .flat_map(|s| placeholders(&s.inputs))
        .filter(|(ns, ..)| ns == "params")
        .map(|(_, name, _)| name)
        .collect();
    head.slots
        .iter()
        .filter(|s| missing.contains(&s.name) || left.contains(&s.name))
        .map(|s| Unfilled::of(s, None))
        .collect()
}
