//! What `plan_store` and `plan_lookup` check and clean before any work: the task and plan sizes
//! (`plans.max_task_bytes`, `plans.max_plan_bytes`) and secrets in the task and the template,
//! which are redacted with the result cache's redactor so no secret reaches the store.

use super::Error;
use super::extract::Trace;
use super::template::PlanTemplate;
use crate::app::App;

/// What to store: a template, or a trace refrain generalises.
#[derive(Debug, Clone)]
pub struct StoreRequest {
    /// The task the plan is for.
    pub task: String,
    /// A ready template.
    pub template: Option<PlanTemplate>,
    /// An executed trace.
    pub trace: Option<Trace>,
    /// The bucket the caller computed; rejected when it disagrees with refrain's.
    pub key: Option<String>,
    /// Provenance label (`template`, `trace`, `import`).
    pub source: Option<String>,
}

/// Refuses a task or plan above the configured sizes, before any work is done on it.
pub fn check_sizes(app: &App, req: &StoreRequest) -> Result<(), Error> {
    check_task(app, &req.task)?;
    let cfg = &app.config.plans;
    let plan = match (&req.template, &req.trace) {
        (Some(t), _) => serde_json::to_vec(t).map(|v| v.len()).unwrap_or(0),
        (None, Some(t)) => serde_json::to_vec(t).map(|v| v.len()).unwrap_or(0),
        (None, None) => 0,
    };
    if plan > cfg.max_plan_bytes {
        return Err(Error::Invalid(format!(
            "the plan is {plan} bytes, above plans.max_plan_bytes ({}); store the steps and their arguments, not file contents or tool output, or raise the limit",
            cfg.max_plan_bytes
        )));
    }
    Ok(())
}

/// Refuses a task text above `plans.max_task_bytes`.
pub fn check_task(app: &App, task: &str) -> Result<(), Error> {
    let max = app.config.plans.max_task_bytes;
    if task.len() > max {
        return Err(Error::Invalid(format!(
            "the task is {} bytes, above plans.max_task_bytes ({max}); send the user's request itself, not the conversation or file contents",
            task.len()
        )));
    }
    Ok(())
}

/// Redacts secrets from every string of a template (step inputs, slot defaults, descriptions).
pub fn redact_template(template: PlanTemplate) -> Result<(PlanTemplate, u32), Error> {
    let mut v = serde_json::to_value(&template).map_err(|e| Error::Invalid(e.to_string()))?;
    let n = crate::results::redactor().redact_value(&mut v);
    if n == 0 {
        return Ok((template, 0));
    }
    let clean = serde_json::from_value(v).map_err(|e| Error::Invalid(format!("plan after redaction: {e}")))?;
    Ok((clean, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_in_step_inputs_and_slot_defaults_are_redacted() {
        let token = ["gh", "p_", "4fT9kQz2LmN8xWvB1cR7", "yH3jP0sD6aE5gU2i"].concat();
        let t: PlanTemplate = serde_json::from_value(json!({
            "steps": [{"tool": "Bash", "inputs": {"command": format!("curl -H 'Authorization: token {token}' x")}}],
            "slots": [{"name": "auth", "type": "string", "default": token}]
        }))
        .unwrap();
        let (clean, n) = redact_template(t).unwrap();
        assert_eq!(n, 2);
        assert!(!serde_json::to_string(&clean).unwrap().contains(&token));
    }
}
