//! Slot filling: from an alignment with the stored task (`fill_aligned`, what lookup serves), or
//! by type alone (`fill`: context values first, then values parsed from the task by type,
//! preferring the slot's role, in order of appearance, then defaults); transforms applied;
//! placeholders hydrated.
//!
//! `{{params.x}}` and nested `{{params.a.b}}` are replaced; `{{outputs.y}}` (an earlier step's
//! output) is left for the agent, which executes the plan.

use super::align::{Alignment, NewTask, Source};
use super::params::{Param, ParamKind};
use super::template::{PlanTemplate, Step};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};

crate::pattern_table! { pub PATTERNS in "fill";
    /// `{{params.a.b}}` / `{{outputs.y}}`: group 1 the namespace, 2 the name, 3 the nested path.
    pub PLACEHOLDER = r"\{\{\s*(params|outputs)\.([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_-]+)*)\s*\}\}",
        "{{params.a.b}}";
}

/// Where a slot's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlotSource {
    /// The caller's context values.
    Context,
    /// A value parsed from the task text.
    Task,
    /// The slot's default.
    Default,
}

/// A template with its slots resolved and its steps hydrated.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    /// Slot values after transforms.
    pub values: BTreeMap<String, Value>,
    /// Where each value came from.
    pub sources: BTreeMap<String, SlotSource>,
    /// Required slots nobody could fill.
    pub missing: Vec<String>,
    /// Steps with `{{params...}}` replaced.
    pub steps: Vec<Step>,
}

impl Filled {
    /// The text values the slots took (not empty): where they stand in the steps, nothing may be
    /// rewritten (`Header` inside `AppHeader`).
    pub fn value_texts(&self) -> Vec<String> {
        self.values.values().filter_map(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string).collect()
    }
}

/// Fills a template's slots and hydrates its steps.
pub fn fill(template: &PlanTemplate, context: &Map<String, Value>, params: &[Param]) -> Filled {
    let mut values = BTreeMap::new();
    let mut sources = BTreeMap::new();
    let mut used: HashSet<usize> = HashSet::new();
    for slot in &template.slots {
        if let Some(v) = context.get(&slot.name) {
            values.insert(slot.name.clone(), v.clone());
            sources.insert(slot.name.clone(), SlotSource::Context);
            if let Some(s) = v.as_str()
                && let Some(i) = params.iter().position(|p| p.value == s)
            {
                used.insert(i);
            }
        }
    }
    // Slots with a role claim matching values first, then the rest take values in order.
    for pass in [true, false] {
        for slot in &template.slots {
            if values.contains_key(&slot.name) || slot.kind == ParamKind::Any || (pass && slot.role.is_none()) {
                continue;
            }
            let pick = params
                .iter()
                .enumerate()
                .find(|(i, p)| !used.contains(i) && p.kind == slot.kind && (!pass || p.role == slot.role));
            if let Some((i, p)) = pick {
                used.insert(i);
                values.insert(slot.name.clone(), Value::String(p.value.clone()));
                sources.insert(slot.name.clone(), SlotSource::Task);
            }
        }
    }
    let mut missing = Vec::new();
    for slot in &template.slots {
        if !values.contains_key(&slot.name) {
            match &slot.default {
                Some(d) => {
                    values.insert(slot.name.clone(), d.clone());
                    sources.insert(slot.name.clone(), SlotSource::Default);
                }
                None if slot.required => missing.push(slot.name.clone()),
                None => {}
            }
        }
        if let (Some(t), Some(Value::String(s))) = (slot.transform, values.get(&slot.name)) {
            let out = t.apply(s);
            values.insert(slot.name.clone(), Value::String(out));
        }
    }
    let steps = template.steps.iter().map(|s| Step { inputs: hydrate(&s.inputs, &values), ..s.clone() }).collect();
    Filled { values, sources, missing, steps }
}

/// Fills a template from an alignment with a new task: each slot's value comes from the caller's
/// context, the task's value aligned with it, or its default; transforms applied; steps hydrated.
pub fn fill_aligned(template: &PlanTemplate, a: &Alignment, new: &NewTask) -> Filled {
    let mut values = BTreeMap::new();
    let mut sources = BTreeMap::new();
    for (slot, src) in template.slots.iter().zip(&a.sources) {
        let (v, from) = match src {
            Some(Source::Context(v)) => (v.clone(), SlotSource::Context),
            Some(Source::Task(t)) => (Value::String(task_value(template, &slot.name, new, *t)), SlotSource::Task),
            // The same text asked again: the value the task said when it was stored.
            Some(Source::Stored(v)) => (v.clone(), SlotSource::Task),
            Some(Source::Default) => match &slot.default {
                Some(d) => (d.clone(), SlotSource::Default),
                None => continue,
            },
            None => continue,
        };
        let v = match (slot.transform, v) {
            (Some(t), Value::String(s)) => Value::String(t.apply(&s)),
            (_, v) => v,
        };
        values.insert(slot.name.clone(), v);
        sources.insert(slot.name.clone(), from);
    }
    let steps = template.steps.iter().map(|s| Step { inputs: hydrate(&s.inputs, &values), ..s.clone() }).collect();
    Filled { values, sources, missing: a.missing.clone(), steps }
}

/// A task's value as the template wants it: an extension the task wrote as a glob (`*.log`)
/// keeps its star, unless the template writes the star itself (`*{{params.ext}}`).
fn task_value(template: &PlanTemplate, slot: &str, new: &NewTask, token: usize) -> String {
    let value = new.value_of(token);
    if new.starred_extension(token) && !starred_in(template, slot) {
        return format!("*{value}");
    }
    value
}

/// Whether a step of the template puts a star right before the slot's placeholder.
fn starred_in(template: &PlanTemplate, slot: &str) -> bool {
    let mut starred = false;
    for step in &template.steps {
        walk_strings(&step.inputs, &mut |s| {
            starred |= PLACEHOLDER.captures_iter(s).any(|c| {
                let whole = c.get(0).map_or(0, |m| m.start());
                &c[1] == "params" && &c[2] == slot && s[..whole].ends_with('*')
            });
        });
    }
    starred
}

/// Replaces `{{params...}}` in every string of a JSON value. A string that is exactly one
/// placeholder takes the value itself (keeping its JSON type); otherwise the value is interpolated.
pub fn hydrate(v: &Value, values: &BTreeMap<String, Value>) -> Value {
    match v {
        Value::String(s) => hydrate_str(s, values),
        Value::Array(a) => Value::Array(a.iter().map(|x| hydrate(x, values)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), hydrate(x, values))).collect()),
        other => other.clone(),
    }
}

fn hydrate_str(s: &str, values: &BTreeMap<String, Value>) -> Value {
    if let Some(c) = PLACEHOLDER.captures(s)
        && c.get(0).is_some_and(|m| m.as_str() == s)
        && &c[1] == "params"
        && let Some(v) = resolve(values, &c[2], &c[3])
    {
        if crate::budget::take(approx_size(v), "hydrated plan") {
            return v.clone();
        }
        return Value::String(s.to_string());
    }
    let out = PLACEHOLDER.replace_all(s, |c: &regex::Captures| {
        if &c[1] != "params" {
            return c[0].to_string();
        }
        // A value is copied once per placeholder: the request's budget bounds the total.
        let value = resolve(values, &c[2], &c[3]).filter(|v| crate::budget::take(approx_size(v), "hydrated plan"));
        match value {
            Some(Value::String(x)) => x.clone(),
            Some(other) => other.to_string(),
            None => c[0].to_string(),
        }
    });
    Value::String(out.into_owned())
}

/// Bytes a JSON value takes when copied or printed, roughly (never less than its text).
fn approx_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => a.iter().map(approx_size).sum::<usize>() + a.len() + 2,
        Value::Object(o) => o.iter().map(|(k, x)| k.len() + 4 + approx_size(x)).sum::<usize>() + 2,
        _ => 24,
    }
}

/// Follows `.a.b` into a slot's (object) value.
fn resolve<'a>(values: &'a BTreeMap<String, Value>, name: &str, path: &str) -> Option<&'a Value> {
    let mut v = values.get(name)?;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        v = match v {
            Value::Object(o) => o.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Every placeholder in a JSON value: (namespace, name, nested path).
pub fn placeholders(v: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    walk_strings(v, &mut |s| {
        for c in PLACEHOLDER.captures_iter(s) {
            out.push((c[1].to_string(), c[2].to_string(), c[3].to_string()));
        }
    });
    out
}

/// Calls `f` on every string inside a JSON value.
pub fn walk_strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| walk_strings(x, f)),
        Value::Object(o) => o.values().for_each(|x| walk_strings(x, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::params::extract;
    use crate::plan::template::{Slot, Transform};
    use serde_json::json;

    fn slot(name: &str, kind: ParamKind) -> Slot {
        Slot::required(name, kind)
    }

    fn template(slots: Vec<Slot>, inputs: Value) -> PlanTemplate {
        let step = Step { tool: "Edit".into(), op: None, inputs, outputs: vec![], side_effect: true, family: None };
        PlanTemplate { steps: vec![step], slots, outputs: vec![], description: None, version: "1".into() }
    }

    #[test]
    fn context_wins_then_task_then_default() {
        let mut s3 = slot("mode", ParamKind::String);
        s3.default = Some(json!("fast"));
        let t = template(
            vec![slot("flag", ParamKind::Flag), slot("path", ParamKind::Path), s3],
            json!({"f": "{{params.path}}"}),
        );
        let ctx: Map<String, Value> = serde_json::from_value(json!({"path": "src/ctx.rs"})).unwrap();
        let f = fill(&t, &ctx, &extract("add --verbose to src/main.rs").0);
        assert_eq!(f.values["path"], json!("src/ctx.rs"));
        assert_eq!(f.values["flag"], json!("--verbose"));
        assert_eq!(f.values["mode"], json!("fast"));
        assert_eq!(f.sources["mode"], SlotSource::Default);
        assert_eq!(f.steps[0].inputs, json!({"f": "src/ctx.rs"}));
    }

    #[test]
    fn roles_put_old_and_new_names_in_place() {
        let mut new = slot("new", ParamKind::Identifier);
        new.role = Some(crate::plan::params::Role::To);
        let t = template(vec![slot("old", ParamKind::Identifier), new], json!("{{params.old}} -> {{params.new}}"));
        let f = fill(&t, &Map::new(), &extract("rename to `b` the symbol `a`").0);
        assert_eq!(f.steps[0].inputs, json!("a -> b"));
    }

    #[test]
    fn nested_paths_keep_types_and_transforms_apply() {
        let mut s = slot("cfg", ParamKind::Any);
        s.transform = None;
        let mut n = slot("name", ParamKind::Identifier);
        n.transform = Some(Transform::SnakeCase);
        let t = template(
            vec![s, n],
            json!({"port": "{{params.cfg.port}}", "fn": "fn {{params.name}}()", "o": "{{outputs.diff}}"}),
        );
        let ctx: Map<String, Value> = serde_json::from_value(json!({"cfg": {"port": 8080}})).unwrap();
        let f = fill(&t, &ctx, &extract("add `parseArgs`").0);
        assert_eq!(f.steps[0].inputs, json!({"port": 8080, "fn": "fn parse_args()", "o": "{{outputs.diff}}"}));
    }

    mod props {
        use super::*;
        use crate::plan::validate::{RuntimeCaps, validate};
        use proptest::prelude::*;

        /// Step inputs that mix text, placeholders for `names` (nested or not) and unknown names.
        fn inputs(names: Vec<String>) -> impl Strategy<Value = Value> {
            let piece = prop_oneof![
                "[a-z ./-]{0,6}".prop_map(|t| t),
                (prop::sample::select(names), prop::option::of("[a-z]{1,3}")).prop_map(|(n, sub)| format!(
                    "{{{{params.{n}{}}}}}",
                    sub.map(|s| format!(".{s}")).unwrap_or_default()
                )),
                "[a-z]{1,5}".prop_map(|n| format!("{{{{ params.{n} }}}}")),
                Just("{{outputs.diff}}".to_string()),
            ];
            let text = prop::collection::vec(piece, 1..4).prop_map(|p| Value::String(p.concat()));
            text.prop_recursive(2, 12, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    prop::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn case() -> impl Strategy<Value = (PlanTemplate, Map<String, Value>)> {
            prop::collection::btree_set("[a-z]{1,5}", 1..4).prop_flat_map(|names| {
                let names: Vec<String> = names.into_iter().collect();
                let ctx = prop::collection::vec(
                    prop_oneof![
                        Just(None),
                        "[a-z0-9]{0,4}".prop_map(|s| Some(json!(s))),
                        ("[a-z]{1,3}", 0i64..9).prop_map(|(k, n)| Some(json!({ k: n }))),
                    ],
                    names.len(),
                );
                (Just(names.clone()), prop::collection::vec(any::<bool>(), names.len()), ctx, inputs(names)).prop_map(
                    |(names, required, ctx, inputs)| {
                        let slots = names
                            .iter()
                            .zip(&required)
                            .map(|(n, r)| Slot { required: *r, ..slot(n, ParamKind::Any) })
                            .collect();
                        let context = names.iter().zip(ctx).filter_map(|(n, v)| v.map(|v| (n.clone(), v))).collect();
                        (template(slots, inputs), context)
                    },
                )
            })
        }

        proptest! {
            /// A plan that passes every validation stage has no `{{params...}}` left anywhere.
            #[test]
            fn a_validated_plan_has_no_placeholder_left((t, ctx) in case()) {
                let f = fill(&t, &ctx, &[]);
                let stages = validate(&t, &f, &RuntimeCaps::default());
                if stages.iter().all(|s| s.ok) {
                    let left: Vec<_> = f.steps.iter().flat_map(|s| placeholders(&s.inputs))
                        .filter(|(ns, _, _)| ns == "params").collect();
                    prop_assert!(left.is_empty(), "left {:?} in {:?}", left, f.steps[0].inputs);
                }
            }

            /// Hydration is deterministic and leaves `{{outputs...}}` for the agent.
            #[test]
            fn hydration_is_deterministic_and_keeps_outputs((t, ctx) in case()) {
                let values: BTreeMap<String, Value> = ctx.into_iter().collect();
                let once = hydrate(&t.steps[0].inputs, &values);
                prop_assert_eq!(&once, &hydrate(&t.steps[0].inputs, &values));
                let outputs = |v: &Value| placeholders(v).into_iter().filter(|(ns, _, _)| ns == "outputs").count();
                prop_assert!(outputs(&once) >= outputs(&t.steps[0].inputs));
            }
        }
    }

    #[test]
    fn missing_required_values_are_listed() {
        let t = template(vec![slot("flag", ParamKind::Flag), slot("path", ParamKind::Path)], json!("x"));
        let f = fill(&t, &Map::new(), &extract("add a flag to src/main.rs").0);
        assert_eq!(f.missing, vec!["flag".to_string()]);
    }

    /// The command a lookup serves for a task that gives its files as a glob (`*.txt`).
    fn served_for(inputs: &str, stored: &str, asked: &str) -> Value {
        use crate::plan::{align, head::Head, key::IntentKey, template::StoredPlan};
        let t = template(vec![slot("files", ParamKind::Path)], json!(inputs));
        let h = Head::of(&StoredPlan::for_test(stored, IntentKey::new("gzip", "x"), t.clone()), None);
        let new = NewTask::new(asked);
        fill_aligned(&t, &align::align(&h, &new, &Map::new()), &new).steps[0].inputs.clone()
    }

    #[test]
    fn a_glob_the_task_writes_keeps_its_star_unless_the_template_writes_it() {
        let own = "Gzip all *.log files at once";
        assert_eq!(served_for("parallel gzip ::: {{params.files}}", own, own), json!("parallel gzip ::: *.log"));
        assert_eq!(
            served_for("parallel gzip ::: {{params.files}}", own, "Gzip all *.txt files at once"),
            json!("parallel gzip ::: *.txt")
        );
        assert_eq!(
            served_for("parallel gzip ::: *{{params.files}}", own, "Gzip all *.txt files at once"),
            json!("parallel gzip ::: *.txt")
        );
        assert_eq!(served_for("ls {{params.files}}", "List the .log files", "List the .txt files"), json!("ls .txt"));
    }
}
