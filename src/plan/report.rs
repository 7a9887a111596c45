//! What a lookup answers: the hit, or a miss with its reason, a suggestion and the nearest
//! candidates, each with its verifier verdict and the stage it failed.

use super::fill::SlotSource;
use super::key::IntentKey;
use super::normalise::Normalised;
use super::template::{Counters, Provenance, Step, Versions};
use super::validate::StageResult;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The result of a lookup.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Lookup {
    /// The served plan, on a hit.
    pub hit: Option<Hit>,
    /// On a miss, the nearest stored task that came close but was not served: not a plan to
    /// follow, only a hint. Compare its `task` with yours; if it is the same kind of task, call
    /// plan_lookup again with its `plan_id` to accept it.
    pub suggestion: Option<Suggestion>,
    /// Up to three such near stored tasks, best first (the first is `suggestion`).
    pub suggestions: Vec<Suggestion>,
    /// What the normaliser made of the task (provenance; never a gate).
    pub task: Normalised,
    /// Its intent key (provenance; never a gate).
    pub key: IntentKey,
    /// The task with its values masked, as plans are compared.
    pub masked: String,
    /// Why nothing was served, on a miss.
    pub reason: Option<String>,
    /// The nearest candidates with their verifier verdicts and the stage they failed (served or
    /// best first).
    pub candidates: Vec<CandidateReport>,
    /// `embeddings`, or why only exact wording was used.
    pub meaning: String,
}

/// A served plan.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Hit {
    /// Plan id (report outcomes with plan_feedback).
    pub plan_id: String,
    /// The verifier's score (1 for an exact match).
    pub score: f32,
    /// How it was verified: `exact`, `cross_encoder`, `cosine` or `llm`.
    pub method: String,
    /// The steps with slots filled.
    pub steps: Vec<Step>,
    /// Slot values.
    pub values: BTreeMap<String, Value>,
    /// Where each value came from.
    pub sources: BTreeMap<String, SlotSource>,
    /// Every validation stage.
    pub stages: Vec<StageResult>,
    /// Outputs the plan produces.
    pub outputs: Vec<String>,
    /// Versions.
    pub versions: Versions,
    /// Provenance.
    pub provenance: Provenance,
    /// When the plan was stored (unix seconds).
    pub stored_at: u64,
    /// Counters before this hit.
    pub counters: Counters,
}

/// A near match that was not served: never a hit. If you judge its stored `task` to be the same
/// kind of task as yours, call plan_lookup again with this `plan_id` to get its steps filled
/// with your task's values.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Suggestion {
    /// The plan id (pass it as `plan_id` to accept the plan).
    pub plan_id: String,
    /// The task it was stored for, as written.
    pub task: String,
    /// The verifier's score, else (a gate refused it before scoring) the masked tasks' cosine.
    pub score: f32,
    /// Why it was not served: `verifier` (scored below its threshold, or a verifier gate named in
    /// `detail`), `coverage` (a value of one task has no place in the other), `required_slots` (a
    /// value the plan needs is not in the task: accepting it lists the slot, give it in
    /// `context`), or the plan-side gate that refused it (`opposite`, `program`...).
    pub failed: String,
    /// Which value or score.
    pub detail: String,
    /// A gate refused it for this task (which one `failed` and `detail` say): shown for the agent
    /// to judge, never offered by a hook.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gated: bool,
    /// Values the two tasks do not share: the stored task's, then this one's (what taking the
    /// plan would change).
    #[serde(skip_serializing_if = "Differs::is_empty")]
    pub differs: Differs,
}

/// The values two tasks do not share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Differs {
    /// Values only the stored task says.
    pub stored: Vec<String>,
    /// Values only this task says.
    pub yours: Vec<String>,
}

impl Differs {
    /// Whether the tasks share every value.
    pub fn is_empty(&self) -> bool {
        self.stored.is_empty() && self.yours.is_empty()
    }

    /// "`a` `b` vs yours `c`": the stored task's values, then yours (`-` for none); empty when the
    /// tasks share every value.
    pub fn phrase(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" ")
            }
        };
        format!("{} vs yours {}", list(&self.stored), list(&self.yours))
    }
}

/// The verifier's verdict on a candidate.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct VerifierReport {
    /// Score (a probability for the cross-encoder, the cosine without one; 1 when exact).
    pub score: f32,
    /// The threshold it was held to, the plan's feedback bias included.
    pub threshold: f32,
    /// Whether it passed.
    pub accepted: bool,
    /// `exact`, `cross_encoder`, `cosine` or `llm`.
    pub method: String,
}

/// A candidate that was considered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CandidateReport {
    /// Plan id.
    pub plan_id: String,
    /// The task it was stored for.
    pub task: String,
    /// That task masked.
    pub masked: String,
    /// Its action (provenance).
    pub action: String,
    /// Its primary target kind (provenance).
    pub kind: String,
    /// Cosine of the masked tasks' embeddings, when known.
    pub cosine: Option<f32>,
    /// The masked tasks are the same, every value filled.
    pub exact: bool,
    /// The verifier's verdict, when it got that far.
    pub verifier: Option<VerifierReport>,
    /// The verifier model's own score, when it scored this candidate (with `explain`, also the
    /// candidates a gate dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_score: Option<f32>,
    /// The gate that dropped it before the verifier decided (a plan stage such as `coverage`, or
    /// the verifier's own), if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// The gate or stage it failed (`quarantined`, `opposite`, `required_slots`, `coverage`,
    /// `tool_families`, `side_effects`, `verifier`, a validation stage, `stale_values`); absent
    /// when it passed.
    pub failed: Option<String>,
    /// Why.
    pub detail: Option<String>,
}
