//! `plan_list`: the stored plans (all, one bucket, or one id), for people and for export.

use super::{Refrain, internal, reply};
use crate::plan::library;
use crate::plan::template::StoredPlan;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Parameters of `plan_list`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanListParams {
    /// Only this plan.
    #[serde(default)]
    pub plan_id: Option<String>,
    /// Only the plans of this bucket.
    #[serde(default)]
    pub bucket: Option<String>,
    /// At most this many plans (default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Output of `plan_list`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanListOutput {
    /// The plans, in id order.
    pub plans: Vec<StoredPlan>,
}

#[tool_router(router = plan_list_router, vis = "pub(crate)")]
impl Refrain {
    /// List stored plans with their templates, keys, versions, provenance and counters (filter by
    /// plan_id or bucket). For reviewing and exporting the plan library.
    #[tool(
        name = "plan_list",
        output_schema = schema_for_output::<PlanListOutput>(),
        annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn plan_list(&self, Parameters(p): Parameters<PlanListParams>) -> Result<CallToolResult, ErrorData> {
        let store = &self.app.store;
        let limit = p.limit.unwrap_or(100);
        let records = match (&p.plan_id, &p.bucket) {
            (Some(id), _) => library::get(store, id).map(|r| r.into_iter().collect()),
            (None, Some(b)) => library::bucket(store, b),
            (None, None) => library::list(store, limit, |_| true),
        }
        .map_err(|e| internal(e.to_string()))?;
        let plans: Vec<StoredPlan> = records.into_iter().take(limit).map(|r| r.plan).collect();
        reply(format!("{} plan(s)", plans.len()), &PlanListOutput { plans })
    }
}
