//! `plan_review`: the team plans waiting for this user's review, with their provenance, counts,
//! risk marks and steps made safe to show; and this user's approval or rejection of one. What
//! `refrain plans review` calls. Not listed to agents by default (`surface`): reviewing is the
//! user's, and decisions stay in this machine's store.

use super::{Refrain, fail, internal, reply};
use crate::plan::frame;
use crate::plan::review::{self, Decision, Policy};
use crate::plan::template::Record;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Parameters of `plan_review`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanReviewParams {
    /// Approve this team plan (its id or the first 8 characters of it).
    #[serde(default)]
    pub approve: Option<String>,
    /// Reject this team plan: it is never served.
    #[serde(default)]
    pub reject: Option<String>,
    /// At most this many pending plans (default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A team plan waiting for review.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Pending {
    /// The plan id.
    pub plan_id: String,
    /// Who published it, as the team database knows them (their database role).
    pub publisher: Option<String>,
    /// When it was published (unix seconds), when known.
    pub published_at: Option<u64>,
    /// The task it was stored for (made safe to show).
    pub task: String,
    /// Successes every member reported.
    pub successes: u64,
    /// Failures every member reported.
    pub failures: u64,
    /// This user's own successes.
    pub own_successes: u64,
    /// This user's own failures.
    pub own_failures: u64,
    /// The risks found in its steps (`runs remote code`, `deletes outside the project`...).
    pub risks: Vec<String>,
    /// Its steps, one numbered line each, made safe to show, risks marked.
    pub steps: Vec<String>,
    /// Why it is quarantined, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<String>,
}

/// The decision just recorded.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Decided {
    /// The plan's full id.
    pub plan_id: String,
    /// `approved` or `rejected`.
    pub decision: Decision,
    /// Whether this user's agents are now handed the plan.
    pub served: bool,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

/// Output of `plan_review`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanReviewOutput {
    /// The user's `team.accept`.
    pub accept: String,
    /// The decision recorded by this call, if it made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided: Option<Decided>,
    /// The team plans still waiting for review, in id order.
    pub pending: Vec<Pending>,
}

fn pending(rec: Record, root: Option<&str>) -> Pending {
    let p = rec.plan;
    let (steps, risks) = frame::step_lines(&p.template.steps, root);
    let team = p.provenance.team.as_ref();
    Pending {
        plan_id: p.id,
        publisher: team.and_then(|t| t.publisher.as_deref()).map(|s| frame::clean(s, 80)),
        published_at: team.and_then(|t| t.published_at),
        task: frame::clean(&p.provenance.task, 200),
        successes: p.counters.successes,
        failures: p.counters.failures,
        own_successes: p.counters.own_successes,
        own_failures: p.counters.own_failures,
        risks: risks.iter().map(|r| r.label().to_string()).collect(),
        steps,
        quarantined: p.quarantined.map(|q| frame::clean(&q, 200)),
    }
}

#[tool_router(router = plan_review_router, vis = "pub(crate)")]
impl Refrain {
    /// For the user (`refrain plans review`): list the team plans waiting for review, or approve
    /// or reject one. Decisions decide which team plans are served under `team.accept`.
    #[tool(
        name = "plan_review",
        output_schema = schema_for_output::<PlanReviewOutput>(),
        annotations(read_only_hint = false, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn plan_review(&self, Parameters(p): Parameters<PlanReviewParams>) -> Result<CallToolResult, ErrorData> {
        let app = &self.app;
        let policy = Policy::of(&app.config.team);
        let choice = match (p.approve, p.reject) {
            (Some(_), Some(_)) => return fail("give `approve` or `reject`, not both"),
            (Some(id), None) => Some((id, Decision::Approved)),
            (None, Some(id)) => Some((id, Decision::Rejected)),
            (None, None) => None,
        };
        let mut decided = None;
        if let Some((id, decision)) = choice {
            let rec = match review::decide(&app.store, &policy, &id, decision) {
                Ok(rec) => rec,
                Err(e) if e.is_caller_fixable() => return fail(e.to_string()),
                Err(e) => return Err(internal(e.to_string())),
            };
            app.store.flush_async().await.map_err(|e| internal(e.to_string()))?;
            let why_not = policy.refusal_of(&rec.plan.provenance, Some(decision));
            decided = Some(Decided { plan_id: rec.plan.id, decision, served: why_not.is_none(), why_not });
        }
        let root = app.project.root.to_string_lossy().into_owned();
        let limit = p.limit.unwrap_or(100);
        let waiting = review::pending(&app.store, &policy, limit).map_err(|e| internal(e.to_string()))?;
        let pending: Vec<Pending> = waiting.into_iter().map(|r| pending(r, Some(&root))).collect();
        let out = PlanReviewOutput { accept: app.config.team.accept.describe(), decided, pending };
        let text = match &out.decided {
            Some(d) => format!(
                "plan {} {}; {}",
                d.plan_id,
                if d.decision == Decision::Approved { "approved" } else { "rejected" },
                match &d.why_not {
                    None => "it is served".to_string(),
                    Some(w) => format!("it is not served: {w}"),
                }
            ),
            None => format!("{} team plan(s) waiting for review (team.accept = {})", out.pending.len(), out.accept),
        };
        reply(text, &out)
    }
}
