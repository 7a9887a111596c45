//! `plan_lookup`: a validated, slot-filled plan for a task of a kind seen before, or why not.

use super::{Refrain, fail, internal, reply};
use crate::ledger;
use crate::plan::report::{Hit, Suggestion};
use crate::plan::template::{Counters, Provenance, Step};
use crate::plan::{frame, restraint, service, validate::RuntimeCaps};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Parameters of `plan_lookup`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanLookupParams {
    /// The task as the user gave it, e.g. "add a `--verbose` flag to src/main.rs".
    pub task: String,
    /// Values you already know, by slot name (e.g. {"path": "src/main.rs"}); they win over values
    /// parsed from the task.
    #[serde(default)]
    pub context: Map<String, Value>,
    /// What you can run: `tool_families` available (absent = all) and whether side effects are
    /// allowed (default true).
    #[serde(default)]
    pub caps: RuntimeCaps,
    /// Look up without recording anything (no hit/miss counters, no hit on the plan): for
    /// reports over past prompts. Leave it out when you are about to do the task.
    #[serde(default)]
    pub dry_run: bool,
    /// Answer with the whole lookup under `explain`: the normalised task, its key, and every
    /// candidate scored by the verifier, those a gate dropped too (for evaluations; the decision
    /// is the same, the lookup slower and its answer long). Default false.
    #[serde(default)]
    pub explain: bool,
    /// Set by refrain's own prompt hook, which shows the agent its own text of the plan (and
    /// reports that to the savings ledger): this answer reaches no model.
    #[serde(default)]
    pub via_hook: bool,
    /// The `plan_id` of a `suggestion` from an earlier plan_lookup that you judged to be the same
    /// kind of task as `task`. refrain then does not search or verify: it fills that plan's steps
    /// with this task's values (and `context`) and answers `accepted`, or `needs_values` with the
    /// slots it could not fill (call again with them in `context`). Never a hit.
    #[serde(default)]
    pub plan_id: Option<String>,
}

/// A served plan: what an agent needs to follow it and report on it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HitOut {
    /// The plan id (report the outcome with plan_feedback).
    pub plan_id: String,
    /// The verifier's score (1 for the same wording).
    pub score: f32,
    /// When the plan was stored (unix seconds).
    pub stored_at: u64,
    /// How it was verified: `exact` (the same wording), `cross_encoder`, `cosine` or `llm`.
    pub method: String,
    /// The steps, with this task's values filled in.
    pub steps: Vec<Step>,
    /// Each slot's value.
    pub values: BTreeMap<String, Value>,
    /// Where the plan came from.
    pub provenance: Provenance,
    /// Its hits and reported outcomes before this one.
    pub counters: Counters,
}

impl From<&Hit> for HitOut {
    fn from(h: &Hit) -> HitOut {
        HitOut {
            plan_id: h.plan_id.clone(),
            score: h.score,
            stored_at: h.stored_at,
            method: h.method.clone(),
            steps: h.steps.clone(),
            values: h.values.clone(),
            provenance: h.provenance.clone(),
            counters: h.counters.clone(),
        }
    }
}

/// Output of `plan_lookup`: short by default, every detail under `explain` when asked.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanLookupOutput {
    /// `hit` (follow `hit.steps`) or `miss` (plan yourself, then call plan_store). A miss may
    /// carry a `suggestion`: a stored task that came close, for you to judge; it is not a plan
    /// for this task. With `plan_id`: `accepted` (follow `accepted.steps`) or `needs_values`
    /// (`accepted.unfilled` lists the slots to give in `context`, with refrain's `guess` where it
    /// doubts one; the steps still hold placeholders or guesses).
    pub status: String,
    /// The served plan, on a hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit: Option<HitOut>,
    /// Why nothing was served, on a miss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// On a miss, up to three stored tasks that came close (never hits), best first, each with
    /// the values it does not share with yours: to take one's plan, call again with its `plan_id`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// With `explain`: the whole lookup (normalised task, key, every candidate and its verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<service::Lookup>,
    /// With `plan_id`: the suggested plan filled with this task's values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted: Option<service::Accepted>,
}

#[tool_router(router = plan_lookup_router, vis = "pub(crate)")]
impl Refrain {
    /// Before planning a task, look for a stored plan for the same kind of task. A hit returns
    /// the steps with this task's values filled in and validated; follow them, then report with
    /// plan_feedback. A miss says why and lists the nearest candidates, and may carry a
    /// `suggestion` (a stored task that came close, never a hit): if you judge its `task` to be
    /// the same kind of task as yours, call plan_lookup again with the same `task` and
    /// `plan_id` set to the suggestion's; you get its steps filled with your values (`accepted`),
    /// or the slots to give in `context` (`needs_values`). Report how it went with plan_feedback
    /// and `accepted: true`.
    #[tool(
        name = "plan_lookup",
        output_schema = schema_for_output::<PlanLookupOutput>(),
        annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn plan_lookup(&self, Parameters(p): Parameters<PlanLookupParams>) -> Result<CallToolResult, ErrorData> {
        if p.task.trim().is_empty() {
            return fail("`task` is empty: pass the task text");
        }
        if let Some(id) = p.plan_id.as_deref() {
            return accept(&self.app, id, &p);
        }
        let lookup = if p.dry_run {
            service::lookup_dry(&self.app, &p.task, &p.context, &p.caps).await
        } else {
            service::lookup_explained(&self.app, &p.task, &p.context, &p.caps, p.explain).await
        };
        let mut lookup = match lookup {
            Ok(l) => l,
            Err(e) if e.is_caller_fixable() => return fail(e.to_string()),
            Err(e) => return Err(internal(e.to_string())),
        };
        // A hook offers near plans unasked: not in a project whose agent does not take them.
        if p.via_hook
            && lookup.hit.is_none()
            && !lookup.suggestions.is_empty()
            && restraint::holds_back(&self.app.store, self.app.config.hooks.suggest_per_take)
                .map_err(|e| internal(e.to_string()))?
        {
            lookup.suggestions.clear();
            lookup.suggestion = None;
        }
        let root = self.app.project.root.to_string_lossy();
        let text = match (&lookup.hit, &lookup.suggestion) {
            (Some(h), _) => {
                let about = frame::About {
                    provenance: &h.provenance,
                    stored_at: h.stored_at,
                    own: (h.counters.own_successes, h.counters.own_failures),
                    root: Some(&root),
                };
                format!(
                    "hit: plan {} ({} score {:.2})\n{}",
                    h.plan_id,
                    h.method,
                    h.score,
                    frame::render(about, &h.steps).text
                )
            }
            (None, Some(_)) => suggestions_text(&lookup.suggestions),
            (None, None) => format!("miss: {}", lookup.reason.as_deref().unwrap_or("no plan")),
        };
        let status = if lookup.hit.is_some() { "hit" } else { "miss" }.to_string();
        let (kind, subject) = match &lookup.hit {
            Some(h) => (ledger::Kind::PlanHit, h.plan_id.clone()),
            None => (ledger::Kind::PlanMiss, String::new()),
        };
        let out = PlanLookupOutput {
            status,
            hit: lookup.hit.as_ref().map(HitOut::from),
            reason: lookup.reason.clone(),
            suggestions: lookup.suggestions.clone(),
            explain: p.explain.then_some(lookup),
            accepted: None,
        };
        let out = reply(text, &out);
        if p.dry_run || p.via_hook { out } else { super::ledgered(&self.app, kind, &subject, None, out) }
    }
}

/// `plan_lookup` with `plan_id`: the suggested plan filled for this task, never a hit.
fn accept(app: &crate::app::App, id: &str, p: &PlanLookupParams) -> Result<CallToolResult, ErrorData> {
    let a = match service::accept(app, id, &p.task, &p.context, &p.caps, p.dry_run) {
        Ok(a) => a,
        Err(e) if e.is_caller_fixable() => return fail(e.to_string()),
        Err(e) => return Err(internal(e.to_string())),
    };
    let (status, text) = if a.unfilled.is_empty() {
        (
            "accepted",
            format!(
                "accepted: plan {} ({} steps) stored for {:?}, filled for this task",
                a.plan_id,
                a.steps.len(),
                a.task
            ),
        )
    } else {
        let names: Vec<String> = a
            .unfilled
            .iter()
            .map(|u| match &u.guess {
                Some(g) => format!("{} (guess {})", u.name, g.as_str().map_or_else(|| g.to_string(), str::to_string)),
                None => u.name.clone(),
            })
            .collect();
        (
            "needs_values",
            format!(
                "needs_values: plan {} stored for {:?} needs a value for {}; call again with them in `context`",
                a.plan_id,
                a.task,
                names.join(", ")
            ),
        )
    };
    let text = match &a.caution {
        Some(c) => format!("{text}; caution: {c}"),
        None => text,
    };
    let out = PlanLookupOutput {
        status: status.to_string(),
        hit: None,
        reason: None,
        suggestions: Vec::new(),
        explain: None,
        accepted: Some(a),
    };
    let out = reply(text, &out);
    if p.dry_run { out } else { super::ledgered(app, ledger::Kind::PlanTaken, id, None, out) }
}

/// A miss with suggestions, one line each: the stored task, its id and what differs from yours.
fn suggestions_text(suggestions: &[Suggestion]) -> String {
    let mut out = String::from("miss. Near plans, maybe unrelated (take one: plan_lookup with its plan_id):");
    for s in suggestions {
        let differs = s.differs.phrase();
        let differs = if differs.is_empty() { String::new() } else { format!(" (values {differs})") };
        let id: String = s.plan_id.chars().take(crate::plan::library::SHORT_ID).collect();
        out.push_str(&format!("\n- {id} \"{}\"{differs}", frame::quoted(&s.task, 120)));
    }
    out
}
