//! Fuzz target: template hydration. Input is JSON `{"template": PlanTemplate, "context": {...},
//! "task": "..."}`; the template is checked, filled from the context and the task's values, and
//! validated. A plan that passes every stage must have no `{{params...}}` placeholder left.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::budget::{self, Limits, Scope};
use refrain::plan::fill::{fill, hydrate, placeholders};
use refrain::plan::normalise::normalise;
use refrain::plan::template::PlanTemplate;
use refrain::plan::validate::{RuntimeCaps, check_template, validate};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    // As in the server: hydration copies each value once per placeholder, within a budget.
    let _scope = Scope::enter(Limits { memory_bytes: 16 << 20, timeout: Duration::from_secs(5) });
    let context: Map<String, Value> = v.get("context").and_then(Value::as_object).cloned().unwrap_or_default();
    let task = v.get("task").and_then(Value::as_str).unwrap_or("");
    // Raw hydration of any value with the context as slot values.
    let values: BTreeMap<String, Value> = context.clone().into_iter().collect();
    let _ = hydrate(v.get("template").unwrap_or(&Value::Null), &values);
    let Some(Ok(template)) = v.get("template").map(|t| serde_json::from_value::<PlanTemplate>(t.clone())) else {
        return;
    };
    if check_template(&template).is_err() {
        return;
    }
    let params = normalise(task).params;
    let filled = fill(&template, &context, &params);
    let stages = validate(&template, &filled, &RuntimeCaps::default());
    if stages.iter().all(|s| s.ok) && budget::exceeded().is_none() {
        for step in &filled.steps {
            let left: Vec<_> = placeholders(&step.inputs).into_iter().filter(|(ns, _, _)| ns == "params").collect();
            assert!(left.is_empty(), "validated plan still has placeholders {left:?}");
        }
    }
});
