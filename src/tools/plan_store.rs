//! `plan_store`: remember a plan, given as a template or as the trace of what was done.

use super::{Refrain, fail, internal, reply};
use crate::plan::extract::Trace;
use crate::plan::service::{self, StoreRequest, Stored};
use crate::plan::template::PlanTemplate;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::Deserialize;

/// Parameters of `plan_store`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanStoreParams {
    /// The task the plan is for, as the user gave it.
    pub task: String,
    /// A template: `steps` (tool, op, inputs with `{{params.<slot>}}` placeholders and
    /// `{{outputs.<name>}}` references, outputs, side_effect, family), typed `slots` (name, type,
    /// required, default, transform, role) and `outputs`. Give this or `trace`.
    #[serde(default)]
    pub template: Option<PlanTemplate>,
    /// What you did: `steps` with their real values (tool calls or todo items) and the `context`
    /// values the task was about; refrain turns the values into slots. Give this or `template`.
    #[serde(default)]
    pub trace: Option<Trace>,
    /// The bucket key, if you computed one; refused when it disagrees with refrain's.
    #[serde(default)]
    pub key: Option<String>,
    /// Provenance label (default `template` or `trace`; `import` for shared libraries).
    #[serde(default)]
    pub source: Option<String>,
}

#[tool_router(router = plan_store_router, vis = "pub(crate)")]
impl Refrain {
    /// After finishing a multi-step task, store the plan so the next task of the same kind
    /// (other values) gets it back from plan_lookup. Give a template or a trace of the steps you
    /// ran; storing the same plan again is harmless and releases it from quarantine (unless the
    /// team library quarantined it: then plan_feedback `release` does).
    #[tool(
        name = "plan_store",
        output_schema = schema_for_output::<Stored>(),
        annotations(read_only_hint = false, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn plan_store(&self, Parameters(p): Parameters<PlanStoreParams>) -> Result<CallToolResult, ErrorData> {
        let req = StoreRequest { task: p.task, template: p.template, trace: p.trace, key: p.key, source: p.source };
        match service::store(&self.app, req).await {
            Ok(s) => {
                let verb = if s.created { "stored" } else { "already stored" };
                let held = s
                    .quarantined
                    .as_ref()
                    .map(|q| {
                        format!(
                            "; still quarantined for the whole team ({q}): storing it again does not release it, \
                             plan_feedback with outcome `release` serves it again for everyone"
                        )
                    })
                    .unwrap_or_default();
                let team = crate::team::problem(&self.app.store).map(|p| format!("; {p}")).unwrap_or_default();
                reply(
                    format!(
                        "{verb}: plan {} for `{} {}` with slots [{}]{held}{team}",
                        s.plan_id,
                        s.key.action,
                        s.key.kind,
                        s.slots.join(", ")
                    ),
                    &s,
                )
            }
            Err(e) if e.is_caller_fixable() => fail(e.to_string()),
            Err(e) => Err(internal(e.to_string())),
        }
    }
}
