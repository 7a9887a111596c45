//! Team plans into the local store and index, where lookups read them: a plan new to this
//! member is checked (its id must be its content's, its template valid, no secret in it), its
//! masked task embedded (in batches) and stored like a plan of its own; a plan it has from the
//! team gets the team's counters and quarantine, and one it stored itself before sharing keeps
//! its own until its publish has added them to the team's. Local hits and the feedback bias stay
//! local.

use super::Error;
use super::queue::{self, Known};
use super::shared::SharedPlan;
use crate::app::App;
use crate::plan::library::{self, Record, SCOPE};
use crate::plan::mask;
use crate::plan::template::{PlanTemplate, StoredPlan, plan_id};
use crate::plan::validate::check_template;

/// What a sync did to the local store.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Plans new to this member.
    pub added: usize,
    /// Plans whose counters or quarantine changed.
    pub updated: usize,
    /// Plans refused (wrong id, invalid template, a secret in it).
    pub refused: usize,
    /// Plans this member had stored itself before the team's copy arrived: their publish (which
    /// adds this member's counts to the team's) was queued.
    pub queued: usize,
}

/// Texts embedded per model call.
const EMBED_BATCH: usize = 64;

/// The task text a plan's vector is computed from (as `plan_store` does).
pub fn masked_task(plan: &StoredPlan) -> String {
    let examples: Vec<String> = plan.template.slots.iter().filter_map(|s| s.example.clone()).collect();
    mask::mask_known(&plan.provenance.task, &examples).text
}

/// Why a plan from the team may not be stored here, or None.
fn refusal(plan: &StoredPlan, masked: &str) -> Option<String> {
    let id = plan_id(&format!("{}\0{}", plan.key.bucket, mask::canonical(masked)), &plan.template);
    if id != plan.id {
        return Some(format!("its id {} is not its content's ({id})", plan.id));
    }
    if let Err(e) = check_template(&plan.template) {
        return Some(format!("invalid template: {e}"));
    }
    if secrets(&plan.template, &plan.provenance.task) > 0 {
        return Some("it holds a secret".into());
    }
    None
}

/// Secrets the redactor finds in a template and task.
pub fn secrets(template: &PlanTemplate, task: &str) -> u32 {
    let (_, n) = crate::results::redactor().redact_str(task);
    let mut v = serde_json::to_value(template).unwrap_or_default();
    n + crate::results::redactor().redact_value(&mut v)
}

/// Stores a page of team plans locally (the caller flushes).
pub async fn apply(app: &App, page: Vec<SharedPlan>) -> Result<Applied, Error> {
    let mut out = Applied::default();
    let mut new = Vec::new();
    for SharedPlan { plan, rev } in page {
        let existing = library::get(&app.store, &plan.id)?;
        if let Some(rec) = &existing
            && queue::known(&app.store, &rec.plan.id)? != Some(Known::Shared)
        {
            // This member stored the same plan itself before the team's copy arrived: its own
            // counts stay until its publish adds them to the team's (queued here when it was not
            // yet), and then come back as the team's.
            if queue::known(&app.store, &rec.plan.id)?.is_none() {
                queue::set_known(&app.store, &rec.plan.id, Known::Queued)?;
                queue::push(&app.store, queue::Change::Publish { id: rec.plan.id.clone() })?;
                out.queued += 1;
            }
            continue;
        }
        if let Some(mut rec) = existing {
            let c = &mut rec.plan.counters;
            let changed = (c.successes, c.failures, c.failure_streak)
                != (plan.counters.successes, plan.counters.failures, plan.counters.failure_streak)
                || rec.plan.quarantined != plan.quarantined
                || rec.plan.provenance.team != plan.provenance.team;
            if changed {
                rec.plan.provenance.team = plan.provenance.team;
                c.successes = plan.counters.successes;
                c.failures = plan.counters.failures;
                c.failure_streak = plan.counters.failure_streak;
                if plan.quarantined.is_none() && rec.plan.quarantined.is_some() {
                    c.bias = 0.0;
                }
                rec.plan.quarantined = plan.quarantined;
                library::put(&app.store, &rec)?;
                out.updated += 1;
            }
            queue::set_known(&app.store, &rec.plan.id, Known::Shared)?;
            continue;
        }
        let masked = masked_task(&plan);
        if let Some(why) = refusal(&plan, &masked) {
            tracing::warn!(plan = %plan.id, rev, reason = %why, "a team plan was not stored");
            out.refused += 1;
            continue;
        }
        new.push((plan, masked));
    }
    for chunk in new.chunks(EMBED_BATCH) {
        let texts: Vec<String> = chunk.iter().map(|(_, m)| m.clone()).collect();
        let vectors = match app.embed.embed(texts).await {
            Ok(v) if v.len() == chunk.len() => {
                let items = chunk.iter().zip(v).map(|((p, _), v)| (p.id.as_bytes().to_vec(), v)).collect();
                app.index().await?.insert_many(SCOPE, items)?.into_iter().map(Some).collect()
            }
            Ok(_) | Err(_) => vec![None; chunk.len()],
        };
        for ((plan, _), vector) in chunk.iter().zip(vectors) {
            let mut plan = plan.clone();
            plan.counters.hits = 0;
            plan.last_hit_at = None;
            plan.stored_at = crate::plan::template::now();
            library::put(&app.store, &Record { plan: plan.clone(), vector })?;
            queue::set_known(&app.store, &plan.id, Known::Shared)?;
            out.added += 1;
        }
    }
    Ok(out)
}
