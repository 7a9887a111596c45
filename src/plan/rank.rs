//! Ranking and gating of lookup candidates: a composite of meaning (embedding cosine, or wording
//! overlap without a model) and structure (slot coverage, tool families, value types, side
//! effects), after ThriftLM V2's `0.7 x semantic + 0.3 x structural`.
//!
//! Gates come before scores: another action, another target kind, a quarantined plan or a
//! missing required slot is never a hit, whatever the similarity.

use super::fill::{Filled, fill};
use super::key::IntentKey;
use super::library;
use super::normalise::Normalised;
use super::params::ParamKind;
use super::template::StoredPlan;
use super::validate::{RuntimeCaps, StageResult, first_failure, validate};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Weight of meaning in the composite score.
pub const MEANING_WEIGHT: f32 = 0.7;

/// One candidate after gating, filling and validation.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The plan.
    pub plan: StoredPlan,
    /// Composite score (after demotion).
    pub score: f32,
    /// Meaning part (cosine or wording overlap).
    pub meaning: f32,
    /// Structure part.
    pub structure: f32,
    /// Whether meaning came from embeddings.
    pub semantic: bool,
    /// The gate or stage that failed, and why; None when the candidate passes.
    pub failed: Option<(String, String)>,
    /// The filled plan (when gates passed).
    pub filled: Option<Filled>,
    /// Stage results (when gates passed).
    pub stages: Vec<StageResult>,
}

/// Judges one candidate for a task.
pub fn judge(
    plan: StoredPlan,
    task: &Normalised,
    key: &IntentKey,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
    cosine: Option<f32>,
    threshold: f32,
) -> Judged {
    let lexical = overlap(&task.skeleton, &plan.skeleton);
    let meaning = cosine.unwrap_or(lexical);
    let filled = fill(&plan.template, context, &task.params);
    let stages = validate(&plan.template, &filled, caps);
    let structure = structure(&plan, task, &filled, &stages);
    let score = (MEANING_WEIGHT * meaning + (1.0 - MEANING_WEIGHT) * structure) * library::demotion(&plan);
    let failed = if let Some(why) = &plan.quarantined {
        Some(("quarantined".to_string(), why.clone()))
    } else if plan.key.action != key.action {
        Some(("action".to_string(), format!("the plan is for `{}`, the task is `{}`", plan.key.action, key.action)))
    } else if !key.compatible(&plan.key) {
        Some(("target_kind".to_string(), format!("the plan acts on a {}, the task on a {}", plan.key.kind, key.kind)))
    } else if let Some(f) = first_failure(&stages) {
        Some((f.stage.to_string(), f.detail.clone().unwrap_or_default()))
    } else if score < threshold {
        Some(("threshold".to_string(), format!("score {score:.3} is below plans.hit_threshold {threshold:.3}")))
    } else {
        None
    };
    Judged { plan, score, meaning, structure, semantic: cosine.is_some(), failed, filled: Some(filled), stages }
}

/// Structure score in [0, 1]: 0.35 required slots resolved, 0.25 tool families available,
/// 0.20 value types agree, 0.20 side effects permitted.
fn structure(plan: &StoredPlan, task: &Normalised, filled: &Filled, stages: &[StageResult]) -> f32 {
    let required = plan.template.slots.iter().filter(|s| s.required).count();
    let resolved = if required == 0 { 1.0 } else { 1.0 - filled.missing.len() as f32 / required as f32 };
    let passed = |name: &str| stages.iter().find(|s| s.stage == name).is_none_or(|s| s.ok);
    let slot_kinds: BTreeSet<ParamKind> =
        plan.template.slots.iter().map(|s| s.kind).filter(|k| *k != ParamKind::Any).collect();
    let task_kinds: BTreeSet<ParamKind> = task.params.iter().map(|p| p.kind).collect();
    let types = jaccard(&slot_kinds, &task_kinds);
    0.35 * resolved
        + 0.25 * f32::from(u8::from(passed("tool_families")))
        + 0.20 * types
        + 0.20 * f32::from(u8::from(passed("side_effects")))
}

fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f32 {
    let union = a.union(b).count();
    if union == 0 { 1.0 } else { a.intersection(b).count() as f32 / union as f32 }
}

/// Wording overlap of two skeletons (Jaccard over their word sets).
pub fn overlap(a: &[String], b: &[String]) -> f32 {
    let a: BTreeSet<&str> = a.iter().map(String::as_str).collect();
    let b: BTreeSet<&str> = b.iter().map(String::as_str).collect();
    jaccard(&a, &b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::normalise::normalise;
    use crate::plan::template::*;
    use serde_json::json;

    fn plan(task: &str, slots: Vec<(&str, ParamKind)>) -> StoredPlan {
        let n = normalise(task);
        let inputs: Map<String, Value> =
            slots.iter().map(|(s, _)| (s.to_string(), json!(format!("{{{{params.{s}}}}}")))).collect();
        let template = PlanTemplate {
            steps: vec![Step {
                tool: "Edit".into(),
                op: None,
                inputs: Value::Object(inputs),
                outputs: vec![],
                side_effect: true,
                family: None,
            }],
            slots: slots.into_iter().map(|(s, k)| Slot::required(s, k)).collect(),
            outputs: vec![],
            description: None,
            version: "1".into(),
        };
        let key = IntentKey::of(&n);
        StoredPlan {
            id: plan_id(&key.bucket, &template),
            key,
            template,
            skeleton: n.skeleton,
            versions: Versions { plan: "1".into(), normaliser: 1, extractor: None },
            provenance: Provenance { source: "template".into(), task: task.into(), confidence: None },
            stored_at: 0,
            last_hit_at: None,
            counters: Counters::default(),
            quarantined: None,
        }
    }

    fn gate(stored: &StoredPlan, task: &str, cosine: Option<f32>) -> Option<String> {
        let n = normalise(task);
        let key = IntentKey::of(&n);
        judge(stored.clone(), &n, &key, &Map::new(), &RuntimeCaps::default(), cosine, 0.3).failed.map(|f| f.0)
    }

    #[rstest::rstest]
    #[case("add a flag `--quiet` to src/cli.rs", None)]
    #[case("remove the flag `--quiet` from src/cli.rs", Some("action"))]
    #[case("add a test for `--quiet` in src/cli.rs", Some("target_kind"))]
    #[case("add a flag to src/cli.rs", Some("required_slots"))]
    fn precision_gates_hold_even_at_perfect_similarity(#[case] task: &str, #[case] want: Option<&str>) {
        let p =
            plan("add a flag `--verbose` to src/main.rs", vec![("flag", ParamKind::Flag), ("path", ParamKind::Path)]);
        assert_eq!(gate(&p, task, Some(1.0)).as_deref(), want, "{task}");
    }

    #[test]
    fn quarantined_plans_are_never_served_and_failures_demote() {
        let mut p = plan("add a flag `--verbose` to src/main.rs", vec![("flag", ParamKind::Flag)]);
        let n = normalise("add a flag `--x`");
        let key = IntentKey::of(&n);
        let fresh = judge(p.clone(), &n, &key, &Map::new(), &RuntimeCaps::default(), Some(0.8), 0.0).score;
        p.counters.failure_streak = 2;
        let demoted = judge(p.clone(), &n, &key, &Map::new(), &RuntimeCaps::default(), Some(0.8), 0.0).score;
        assert!(demoted < fresh);
        p.quarantined = Some("3 failures".into());
        assert_eq!(gate(&p, "add a flag `--x`", Some(1.0)).as_deref(), Some("quarantined"));
    }
}
