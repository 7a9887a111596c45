//! `plan_feedback`: how a reused plan went. Failures demote it; repeated failures quarantine it.

use super::{Refrain, fail, internal, reply};
use crate::plan::library::Outcome;
use crate::plan::service;
use crate::plan::template::Counters;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Parameters of `plan_feedback`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanFeedbackParams {
    /// The `plan_id` plan_lookup returned.
    pub plan_id: String,
    /// `success`, `failure`, or `release` (serve a quarantined plan again).
    pub outcome: Outcome,
    /// What went wrong (kept with the quarantine reason).
    #[serde(default)]
    pub reason: Option<String>,
    /// True when you got this plan by accepting a suggestion (plan_lookup with `plan_id`): the
    /// outcome is counted, but since you judged the match, not refrain, a failure neither raises
    /// the plan's threshold nor counts toward its quarantine. Default false.
    #[serde(default)]
    pub accepted: bool,
}

/// Output of `plan_feedback`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanFeedbackOutput {
    /// The plan.
    pub plan_id: String,
    /// Its counters now.
    pub counters: Counters,
    /// Why it is quarantined, if it is (it is not served until stored again or released).
    pub quarantined: Option<String>,
    /// What is wrong with the team library (`team.*` in your own config, or the database), when
    /// something is: plans are not shared until it is fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

#[tool_router(router = plan_feedback_router, vis = "pub(crate)")]
impl Refrain {
    /// Report whether a plan from plan_lookup worked. Failures rank it lower; after
    /// `plans.quarantine_after` failures in a row it is quarantined and no longer served.
    #[tool(
        name = "plan_feedback",
        output_schema = schema_for_output::<PlanFeedbackOutput>(),
        annotations(read_only_hint = false, idempotent_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn plan_feedback(
        &self,
        Parameters(p): Parameters<PlanFeedbackParams>,
    ) -> Result<CallToolResult, ErrorData> {
        match service::feedback(&self.app, &p.plan_id, p.outcome, p.reason.as_deref(), p.accepted).await {
            Ok(plan) => {
                // The plan's outcome counts locally already; the team's share waits in the queue
                // when the database is away, so a failure here is logged, never the agent's. A
                // failure of an accepted plan stays local: the team's counters would count it
                // toward the plan's quarantine.
                let share = !(p.accepted && p.outcome == Outcome::Failure);
                if share
                    && let Err(e) = crate::team::after_feedback(&self.app, &plan, p.outcome, p.reason.as_deref()).await
                {
                    tracing::warn!(error = %e, plan = %plan.id, "team library change not queued");
                }
                let out = PlanFeedbackOutput {
                    plan_id: plan.id,
                    counters: plan.counters,
                    quarantined: plan.quarantined,
                    team: crate::team::problem(&self.app.store),
                };
                let state =
                    out.quarantined.as_ref().map(|q| format!("quarantined ({q})")).unwrap_or_else(|| "served".into());
                reply(
                    format!(
                        "plan {}: {} successes, {} failures, {state}{}",
                        out.plan_id,
                        out.counters.successes,
                        out.counters.failures,
                        out.team.as_ref().map(|t| format!("; {t}")).unwrap_or_default()
                    ),
                    &out,
                )
            }
            Err(e) if e.is_caller_fixable() => fail(e.to_string()),
            Err(e) => Err(internal(e.to_string())),
        }
    }
}
