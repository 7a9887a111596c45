//! Deterministic extraction: an executed trace (task, context values, the steps the agent ran)
//! becomes a template by replacing the values found in the steps with `{{params.x}}` slots.
//!
//! No LLM and no network. It refuses, with a reason, when the trace is too short, nothing in it
//! generalises, or too few of the task's values appear in the steps (low confidence).

use super::EXTRACTOR_VERSION;
use super::fill::PLACEHOLDER;
use super::params::{self, ParamKind, Role};
use super::template::{OutputField, PlanTemplate, Slot, Step};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Fewest steps a trace needs.
pub const MIN_STEPS: usize = 2;
/// Lowest confidence (share of the task's values found in the steps) accepted.
pub const MIN_CONFIDENCE: f32 = 0.5;

/// What the agent did for a task.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// The values the task was about, by name (`{"flag": "--verbose", "path": "src/main.rs"}`).
    #[serde(default)]
    pub context: Map<String, Value>,
    /// The steps run, in order (tool calls or todo items), with their real values.
    pub steps: Vec<Step>,
    /// Outputs the plan promises.
    #[serde(default)]
    pub outputs: Vec<OutputField>,
}

/// A template generalised from a trace.
#[derive(Debug, Clone)]
pub struct Extracted {
    /// The template.
    pub template: PlanTemplate,
    /// Share of candidate values found in the steps.
    pub confidence: f32,
    /// The extractor version.
    pub version: u32,
}

struct Candidate {
    slot: String,
    path: String,
    value: String,
    kind: ParamKind,
    role: Option<Role>,
    from_task: bool,
    uses: usize,
}

/// Generalises a trace for `task`, or says why it cannot.
pub fn extract(task: &str, trace: &Trace) -> Result<Extracted, String> {
    if trace.steps.len() < MIN_STEPS {
        return Err(format!(
            "the trace has {} step(s); at least {MIN_STEPS} are needed for a reusable plan",
            trace.steps.len()
        ));
    }
    let (parsed, _) = params::extract(task);
    let mut cands = candidates(&trace.context, &parsed);
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|a, b| cands[*b].value.len().cmp(&cands[*a].value.len()));
    let steps: Vec<Step> =
        trace.steps.iter().map(|s| Step { inputs: generalise(&s.inputs, &mut cands, &order), ..s.clone() }).collect();
    let used: Vec<&Candidate> = cands.iter().filter(|c| c.uses > 0).collect();
    if used.is_empty() {
        return Err("nothing generalises: none of the context values or values in the task appear in the steps".into());
    }
    let task_values: Vec<&Candidate> = cands.iter().filter(|c| c.from_task).collect();
    let confidence = if task_values.is_empty() {
        used.len() as f32 / cands.len().max(1) as f32
    } else {
        task_values.iter().filter(|c| c.uses > 0).count() as f32 / task_values.len() as f32
    };
    if confidence < MIN_CONFIDENCE {
        let missing: Vec<&str> = task_values.iter().filter(|c| c.uses == 0).map(|c| c.value.as_str()).collect();
        return Err(format!(
            "low confidence ({confidence:.2}): the steps do not use {} from the task, so the plan may not fit other values",
            missing.join(", ")
        ));
    }
    let mut slots: Vec<Slot> = Vec::new();
    for c in &used {
        if slots.iter().any(|s| s.name == c.slot) {
            continue;
        }
        let kind = if c.path.is_empty() { c.kind } else { ParamKind::Any };
        slots.push(Slot { role: c.role, ..Slot::required(c.slot.clone(), kind) });
    }
    let template = PlanTemplate {
        steps,
        slots,
        outputs: trace.outputs.clone(),
        description: Some(task.to_string()),
        version: "1".into(),
    };
    Ok(Extracted { template, confidence, version: EXTRACTOR_VERSION })
}

/// Context values (one level of nesting) and the task's parsed values, named by type.
fn candidates(context: &Map<String, Value>, parsed: &[params::Param]) -> Vec<Candidate> {
    let mut out = Vec::new();
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    for (name, v) in context {
        let leaves: Vec<(String, String)> = match v {
            Value::Object(o) => o.iter().filter_map(|(k, x)| scalar(x).map(|s| (format!(".{k}"), s))).collect(),
            other => scalar(other).map(|s| vec![(String::new(), s)]).unwrap_or_default(),
        };
        for (path, value) in leaves {
            let kind = parsed.iter().find(|p| p.value == value).map(|p| p.kind).unwrap_or_else(|| shape(&value));
            out.push(Candidate { slot: name.clone(), path, value, kind, role: None, from_task: false, uses: 0 });
        }
    }
    let mut seen: BTreeMap<ParamKind, usize> = BTreeMap::new();
    let repeated = |k: ParamKind| parsed.iter().filter(|p| p.kind == k).count() > 1;
    for p in parsed {
        let n = seen.entry(p.kind).or_insert(0);
        *n += 1;
        if let Some(c) = out.iter_mut().find(|c| c.value == p.value) {
            c.from_task = true;
            continue;
        }
        let slot = if *n == 1 { p.kind.name().to_string() } else { format!("{}_{n}", p.kind.name()) };
        let role = if repeated(p.kind) { p.role } else { None };
        out.push(Candidate {
            slot,
            path: String::new(),
            value: p.value.clone(),
            kind: p.kind,
            role,
            from_task: true,
            uses: 0,
        });
    }
    // An empty value matches everywhere and generalises nothing, so it never becomes a slot.
    out.retain(|c| {
        c.value.chars().count() >= 2 || (!c.value.is_empty() && c.value.chars().all(|ch| ch.is_ascii_digit()))
    });
    out
}

/// The most specific type a bare value fits.
fn shape(v: &str) -> ParamKind {
    [ParamKind::Url, ParamKind::Flag, ParamKind::Date, ParamKind::Version, ParamKind::Number]
        .into_iter()
        .find(|k| k.accepts(v))
        .unwrap_or_else(|| {
            if v.contains('/')
                || params::extract(v).0.first().is_some_and(|p| p.kind == ParamKind::Path && p.value == v)
            {
                ParamKind::Path
            } else if ParamKind::Identifier.accepts(v) {
                ParamKind::Identifier
            } else {
                ParamKind::String
            }
        })
}

fn generalise(v: &Value, cands: &mut [Candidate], order: &[usize]) -> Value {
    match v {
        Value::String(s) => Value::String(replace_values(s, cands, order)),
        Value::Array(a) => Value::Array(a.iter().map(|x| generalise(x, cands, order)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), generalise(x, cands, order))).collect()),
        other => other.clone(),
    }
}

/// Replaces whole-word occurrences of candidate values (longest first) outside placeholders.
fn replace_values(s: &str, cands: &mut [Candidate], order: &[usize]) -> String {
    let mut text = s.to_string();
    for &i in order {
        let Some(c) = cands.get_mut(i) else { continue };
        let placeholder = format!("{{{{params.{}{}}}}}", c.slot, c.path);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for m in PLACEHOLDER.find_iter(&text) {
            let (seg, n) = replace_in(&text[last..m.start()], &c.value, &placeholder);
            c.uses += n;
            out.push_str(&seg);
            out.push_str(m.as_str());
            last = m.end();
        }
        let (seg, n) = replace_in(&text[last..], &c.value, &placeholder);
        c.uses += n;
        out.push_str(&seg);
        text = out;
    }
    text
}

fn replace_in(seg: &str, value: &str, with: &str) -> (String, usize) {
    if value.is_empty() {
        // `find("")` matches at every position without advancing: nothing to replace.
        return (seg.to_string(), 0);
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(seg.len());
    let mut n = 0;
    let mut rest = seg;
    while let Some(i) = rest.find(value) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + value.len()..].chars().next();
        let first_is_word = word(value.chars().next());
        let last_is_word = word(value.chars().next_back());
        if (first_is_word && word(before)) || (last_is_word && word(after)) {
            let step = i + value.chars().next().map(char::len_utf8).unwrap_or(1);
            out.push_str(&rest[..step]);
            rest = &rest[step..];
            continue;
        }
        if !crate::budget::take(i + with.len(), "extracted template") {
            // Over the request's budget: stop growing; the caller's request is refused.
            break;
        }
        out.push_str(&rest[..i]);
        out.push_str(with);
        rest = &rest[i + value.len()..];
        n += 1;
    }
    out.push_str(rest);
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trace(v: Value) -> Trace {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn task_and_context_values_become_slots() {
        let t = trace(json!({
            "context": {"file": "src/main.rs"},
            "steps": [
                {"tool": "Read", "inputs": {"path": "src/main.rs"}},
                {"tool": "Edit", "inputs": {"path": "src/main.rs", "new": "#[arg(long)] verbose: bool // --verbose"}, "side_effect": true},
                {"tool": "Bash", "inputs": {"cmd": "cargo run -- --verbose"}}
            ]
        }));
        let e = extract("add a `--verbose` flag to src/main.rs", &t).unwrap();
        let names: Vec<&str> = e.template.slots.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["file", "flag"]);
        assert_eq!(e.template.steps[0].inputs, json!({"path": "{{params.file}}"}));
        assert_eq!(e.template.steps[2].inputs, json!({"cmd": "cargo run -- {{params.flag}}"}));
        assert_eq!(e.confidence, 1.0);
    }

    #[test]
    fn empty_context_values_are_no_slot_and_do_not_loop() {
        let t = trace(json!({
            "context": {"x": "", "file": "src/main.rs"},
            "steps": [{"tool": "Read", "inputs": {"path": "src/main.rs"}}, {"tool": "Bash", "inputs": "cargo test"}]
        }));
        let e = extract("check src/main.rs", &t).unwrap();
        let names: Vec<&str> = e.template.slots.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["file"]);
        assert_eq!(replace_in("abc", "", "X"), ("abc".to_string(), 0));
    }

    #[test]
    fn values_inside_longer_words_are_left_alone() {
        let (s, n) = replace_in("parse_all(parse)", "parse", "X");
        assert_eq!((s.as_str(), n), ("parse_all(X)", 1));
    }

    #[rstest::rstest]
    #[case(json!({"steps": [{"tool": "Edit", "inputs": {"path": "src/a.rs"}}]}), "add --x to src/a.rs", "at least 2")]
    #[case(json!({"steps": [{"tool": "Bash", "inputs": "cargo fmt"}, {"tool": "Bash", "inputs": "cargo test"}]}), "format the code", "nothing generalises")]
    #[case(json!({"steps": [{"tool": "Edit", "inputs": "edit src/a.rs"}, {"tool": "Bash", "inputs": "cargo test"}]}), "move `foo` and `bar` from src/a.rs to src/b.rs", "low confidence")]
    fn refusals_say_why(#[case] t: Value, #[case] task: &str, #[case] why: &str) {
        let err = extract(task, &trace(t)).unwrap_err();
        assert!(err.contains(why), "{err}");
    }
}
