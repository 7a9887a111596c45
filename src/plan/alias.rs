//! Aliases: a phrasing the agent itself judged to be a stored plan's kind of task, proved by use.
//!
//! The agent calling refrain is the best judge of "is this the same task?" that refrain has. When
//! it takes a suggested plan (`plan_lookup` with `plan_id`), the filled plan is remembered as
//! pending for that plan; when it then reports success for it (`plan_feedback`, `accepted`), the
//! phrasing it used becomes an alias of the plan. The next time a task is asked in exactly those
//! words (case, spacing and end punctuation aside), the lookup serves the plan as a verified hit
//! (`method: alias`), filled the way the accepted one was. So recall grows with use, and only
//! through the agent's own judgement plus a reported success. Only a fill refrain had no caution
//! about, with every slot filled, can become an alias; a failure reported for a plan forgets its
//! aliases and anything pending.

use super::Error;
use super::align::{NewTask, align, own};
use super::fill::fill_aligned;
use super::head::Head;
use super::library;
use super::mask;
use super::report::Hit;
use super::spelling;
use super::template::now;
use super::validate::{RuntimeCaps, first_failure, validate};
use crate::app::App;
use crate::store::{Store, trees};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// How long an accepted plan waits for its success report before it can no longer become an alias.
const PENDING_MS: u64 = 24 * 3600 * 1000;

/// A phrasing the agent accepted for a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alias {
    /// The plan.
    pub plan_id: String,
    /// The phrasing, as the agent gave it (secrets redacted).
    pub task: String,
    /// The context values the accepted fill was given.
    pub context: Map<String, Value>,
    /// When it was accepted (ms since the epoch).
    pub at_ms: u64,
}

fn text_key(task: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(b"alias\0");
    h.update(mask::canonical(task).as_bytes());
    h.finalize()[..16].to_vec()
}

/// Remembers an accepted fill of `plan_id` for `task`, until its outcome is reported.
pub fn pending(store: &Store, plan_id: &str, task: &str, context: &Map<String, Value>) -> Result<(), Error> {
    let a = Alias { plan_id: plan_id.into(), task: task.into(), context: context.clone(), at_ms: now() };
    store.put(trees::PLAN_PENDING, plan_id.as_bytes(), &a)?;
    Ok(())
}

/// A success was reported for an accepted plan: its pending phrasing becomes an alias. Returns
/// the phrasing when one did.
pub fn promote(store: &Store, plan_id: &str) -> Result<Option<String>, Error> {
    let Some(a) = store.get::<Alias>(trees::PLAN_PENDING, plan_id.as_bytes())? else { return Ok(None) };
    store.remove(trees::PLAN_PENDING, plan_id.as_bytes())?;
    if now().saturating_sub(a.at_ms) > PENDING_MS {
        return Ok(None);
    }
    store.put(trees::PLAN_ALIASES, &text_key(&a.task), &a)?;
    Ok(Some(a.task))
}

/// A failure was reported for a plan: it loses its aliases and anything pending.
pub fn forget(store: &Store, plan_id: &str) -> Result<usize, Error> {
    store.remove(trees::PLAN_PENDING, plan_id.as_bytes())?;
    let mut gone = 0;
    for (k, a) in store.scan::<Alias>(trees::PLAN_ALIASES, &[])? {
        if a.plan_id == plan_id {
            store.remove(trees::PLAN_ALIASES, &k)?;
            gone += 1;
        }
    }
    Ok(gone)
}

/// The plan aliased to exactly this task's words, filled and validated as a hit; None when there
/// is no alias, or its plan is gone, quarantined, not served to this user (`review`) or no
/// longer fills and validates cleanly.
pub fn serve(
    app: &App,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
    dry: bool,
) -> Result<Option<Hit>, Error> {
    let Some(alias) = app.store.get::<Alias>(trees::PLAN_ALIASES, &text_key(task))? else { return Ok(None) };
    let Some(rec) = library::get(&app.store, &alias.plan_id)? else { return Ok(None) };
    if rec.plan.quarantined.is_some() {
        return Ok(None);
    }
    if super::review::Policy::of(&app.config.team).refusal_of_plan(&app.store, &rec.plan)?.is_some() {
        return Ok(None);
    }
    let mut given = alias.context.clone();
    given.extend(context.iter().map(|(k, v)| (k.clone(), v.clone())));
    let new = NewTask::new(task);
    let head = Head::of(&rec.plan, rec.vector);
    let a = own(&head, &new, &given).unwrap_or_else(|| align(&head, &new, &given));
    if !a.missing.is_empty() {
        return Ok(None);
    }
    let template = &rec.plan.template;
    let filled = fill_aligned(template, &a, &new);
    let stages = validate(template, &filled, caps);
    if first_failure(&stages).is_some() || spelling::stale(template, &filled).is_some() {
        return Ok(None);
    }
    if !dry && app.store.check_room().is_ok() {
        super::hits::record(&app.store, &rec.plan.id, now())?;
    }
    Ok(Some(Hit {
        plan_id: rec.plan.id,
        score: 1.0,
        stored_at: rec.plan.stored_at,
        method: "alias".into(),
        steps: filled.steps,
        values: filled.values,
        sources: filled.sources,
        stages,
        outputs: template.outputs.iter().map(|o| o.name.clone()).collect(),
        versions: rec.plan.versions,
        provenance: rec.plan.provenance,
        counters: rec.plan.counters,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_phrasing_becomes_an_alias_only_on_success_and_a_failure_forgets_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        assert_eq!(promote(&s, "p1").unwrap(), None, "nothing pending, nothing promoted");
        pending(&s, "p1", "Bump serde to 1.0.200", &Map::new()).unwrap();
        assert_eq!(promote(&s, "p1").unwrap().as_deref(), Some("Bump serde to 1.0.200"));
        assert_eq!(promote(&s, "p1").unwrap(), None, "a pending fill is promoted once");
        let found: Option<Alias> = s.get(trees::PLAN_ALIASES, &text_key("bump serde to 1.0.200.")).unwrap();
        assert_eq!(found.map(|a| a.plan_id).as_deref(), Some("p1"), "case and end punctuation aside");
        assert!(s.get::<Alias>(trees::PLAN_ALIASES, &text_key("bump tokio to 1.0.200")).unwrap().is_none());
        pending(&s, "p1", "another phrasing", &Map::new()).unwrap();
        assert_eq!(forget(&s, "p1").unwrap(), 1);
        assert_eq!(promote(&s, "p1").unwrap(), None, "a failure drops what was pending too");
        assert!(s.get::<Alias>(trees::PLAN_ALIASES, &text_key("Bump serde to 1.0.200")).unwrap().is_none());
    }
}
