//! The seven validation stages a filled plan passes before it is served (after ThriftLM V2):
//! required slots resolved, types, step inputs satisfied, tool families available, no
//! placeholder left, required outputs produced, side effects permitted.

use super::fill::{Filled, placeholders};
use super::template::PlanTemplate;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// What the caller's runtime can do.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeCaps {
    /// Tool families available (`fs`, `shell`, `git`, `github`, `web`...); absent means all.
    #[serde(default)]
    pub tool_families: Option<Vec<String>>,
    /// Whether steps with side effects are allowed (default true: coding agents edit files).
    #[serde(default)]
    pub allow_side_effects: Option<bool>,
}

/// One stage's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StageResult {
    /// Stage name.
    pub stage: &'static str,
    /// Passed?
    pub ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Stage names, in order.
pub const STAGES: [&str; 7] =
    ["required_slots", "types", "step_inputs", "tool_families", "placeholders", "outputs", "side_effects"];

/// Runs every stage; the first failing one (if any) is why the plan is not served.
pub fn validate(template: &PlanTemplate, filled: &Filled, caps: &RuntimeCaps) -> Vec<StageResult> {
    let checks: [Option<String>; 7] = [
        (!filled.missing.is_empty()).then(|| format!("no value for required slot(s) {}", filled.missing.join(", "))),
        types(template, filled),
        step_inputs(template),
        families(template, caps),
        leftover(filled),
        outputs(template),
        side_effects(template, caps),
    ];
    STAGES.iter().zip(checks).map(|(stage, detail)| StageResult { stage, ok: detail.is_none(), detail }).collect()
}

/// Checks a template on its own (what `plan_store` requires before storing).
pub fn check_template(template: &PlanTemplate) -> Result<(), String> {
    if template.steps.is_empty() {
        return Err("a plan needs at least one step".into());
    }
    let mut names = HashSet::new();
    for s in &template.slots {
        if !names.insert(&s.name) {
            return Err(format!("slot {} is declared twice", s.name));
        }
    }
    if let Some(why) = step_inputs(template).or_else(|| outputs(template)) {
        return Err(why);
    }
    Ok(())
}

/// The first failing stage of a result list.
pub fn first_failure(results: &[StageResult]) -> Option<&StageResult> {
    results.iter().find(|r| !r.ok)
}

fn types(template: &PlanTemplate, filled: &Filled) -> Option<String> {
    for slot in &template.slots {
        if let Some(v) = filled.values.get(&slot.name) {
            let ok = match v {
                serde_json::Value::String(s) => slot.kind.accepts(s),
                serde_json::Value::Number(_) => {
                    slot.kind.accepts(&v.to_string()) || slot.kind == super::params::ParamKind::String
                }
                serde_json::Value::Null => false,
                _ => slot.kind == super::params::ParamKind::Any,
            };
            if !ok {
                return Some(format!("slot {} expects a {} but got {}", slot.name, slot.kind.name(), v));
            }
        }
    }
    None
}

fn step_inputs(template: &PlanTemplate) -> Option<String> {
    let slots: HashSet<&str> = template.slots.iter().map(|s| s.name.as_str()).collect();
    let mut produced: HashSet<&str> = HashSet::new();
    for (i, step) in template.steps.iter().enumerate() {
        for (ns, name, _) in placeholders(&step.inputs) {
            let ok = if ns == "params" { slots.contains(name.as_str()) } else { produced.contains(name.as_str()) };
            if !ok {
                let what = if ns == "params" { "no slot declares it" } else { "no earlier step produces it" };
                return Some(format!("step {} uses {{{{{ns}.{name}}}}} but {what}", i + 1));
            }
        }
        produced.extend(step.outputs.iter().map(String::as_str));
    }
    None
}

fn families(template: &PlanTemplate, caps: &RuntimeCaps) -> Option<String> {
    let have = caps.tool_families.as_ref()?;
    let missing: Vec<&str> =
        template.steps.iter().filter_map(|s| s.family.as_deref()).filter(|f| !have.iter().any(|h| h == f)).collect();
    (!missing.is_empty()).then(|| format!("tool families not available: {}", missing.join(", ")))
}

fn leftover(filled: &Filled) -> Option<String> {
    for step in &filled.steps {
        if let Some((_, name, path)) = placeholders(&step.inputs).into_iter().find(|(ns, _, _)| ns == "params") {
            return Some(format!("placeholder {{{{params.{name}{path}}}}} left unfilled"));
        }
    }
    None
}

fn outputs(template: &PlanTemplate) -> Option<String> {
    let produced: HashSet<&str> = template.steps.iter().flat_map(|s| s.outputs.iter().map(String::as_str)).collect();
    let missing: Vec<&str> = template
        .outputs
        .iter()
        .filter(|o| !o.optional && !produced.contains(o.name.as_str()))
        .map(|o| o.name.as_str())
        .collect();
    (!missing.is_empty()).then(|| format!("no step produces output(s) {}", missing.join(", ")))
}

fn side_effects(template: &PlanTemplate, caps: &RuntimeCaps) -> Option<String> {
    if caps.allow_side_effects != Some(false) {
        return None;
    }
    let n = template.steps.iter().filter(|s| s.side_effect).count();
    (n > 0).then(|| format!("{n} step(s) have side effects and side effects are not allowed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fill::fill;
    use crate::plan::params::{ParamKind, extract};
    use crate::plan::template::{OutputField, Slot, Step};
    use rstest::rstest;
    use serde_json::{Map, json};

    fn template() -> PlanTemplate {
        let step = |tool: &str, inputs: serde_json::Value, outputs: Vec<&str>, fx: bool, fam: &str| Step {
            tool: tool.into(),
            op: None,
            inputs,
            outputs: outputs.into_iter().map(String::from).collect(),
            side_effect: fx,
            family: Some(fam.into()),
        };
        PlanTemplate {
            steps: vec![
                step("Read", json!({"path": "{{params.path}}"}), vec!["source"], false, "fs"),
                step(
                    "Edit",
                    json!({"path": "{{params.path}}", "add": "{{params.flag}}", "from": "{{outputs.source}}"}),
                    vec!["diff"],
                    true,
                    "fs",
                ),
                step("Bash", json!({"cmd": "cargo test"}), vec!["report"], false, "shell"),
            ],
            slots: vec![Slot::required("flag", ParamKind::Flag), Slot::required("path", ParamKind::Path)],
            outputs: vec![OutputField { name: "diff".into(), optional: false }],
            description: None,
            version: "1".into(),
        }
    }

    fn failing(t: &PlanTemplate, task: &str, ctx: serde_json::Value, caps: RuntimeCaps) -> Option<&'static str> {
        let ctx: Map<String, serde_json::Value> = serde_json::from_value(ctx).unwrap();
        let f = fill(t, &ctx, &extract(task).0);
        first_failure(&validate(t, &f, &caps)).map(|r| r.stage)
    }

    #[rstest]
    #[case("add --verbose to src/main.rs", json!({}), RuntimeCaps::default(), None)]
    #[case("add a flag to src/main.rs", json!({}), RuntimeCaps::default(), Some("required_slots"))]
    #[case("add --verbose to src/main.rs", json!({"flag": "verbose please"}), RuntimeCaps::default(), Some("types"))]
    #[case("add --verbose to src/main.rs", json!({}), RuntimeCaps { tool_families: Some(vec!["fs".into()]), allow_side_effects: None }, Some("tool_families"))]
    #[case("add --verbose to src/main.rs", json!({}), RuntimeCaps { tool_families: None, allow_side_effects: Some(false) }, Some("side_effects"))]
    fn stages_catch_what_they_should(
        #[case] task: &str,
        #[case] ctx: serde_json::Value,
        #[case] caps: RuntimeCaps,
        #[case] want: Option<&str>,
    ) {
        assert_eq!(failing(&template(), task, ctx, caps), want);
    }

    #[test]
    fn step_inputs_need_a_slot_or_an_earlier_output() {
        let mut t = template();
        t.steps.swap(0, 1);
        assert_eq!(failing(&t, "add --verbose to src/main.rs", json!({}), RuntimeCaps::default()), Some("step_inputs"));
        assert!(check_template(&t).is_err());
    }

    #[test]
    fn undeclared_outputs_and_leftover_placeholders_fail() {
        let mut t = template();
        t.outputs.push(OutputField { name: "summary".into(), optional: false });
        assert_eq!(failing(&t, "add --verbose to src/main.rs", json!({}), RuntimeCaps::default()), Some("outputs"));
        let mut t = template();
        t.slots[1].required = false;
        assert_eq!(failing(&t, "add --verbose", json!({}), RuntimeCaps::default()), Some("placeholders"));
    }
}
