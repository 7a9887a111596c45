//! Whose team plans reach this user's agents (`team.accept`) and this user's review of them
//! (`refrain plans review`).
//!
//! A team plan is someone else's text. `team.accept` chooses whose: everyone's, only the plans
//! this user approved, or only those of named publishers (their database roles, the team
//! library's `published_by`, never what a plan's own JSON says). A plan the setting does not
//! accept is not a candidate at all: no hit, no suggestion, no alias, no accept, so no hook hands
//! it over either; it stays in the store, so a changed setting or a review takes effect at once.
//! This user's own plans (stored here, or published under this user's role) are never filtered,
//! and a plan this user rejected is never served, whatever the setting.
//!
//! Decisions are kept in this machine's store (`PLAN_REVIEWS`), never in the team database.

use super::Error;
use super::library;
use super::template::{Provenance, Record, StoredPlan, now};
use crate::config::{Accept, TeamConfig};
use crate::store::{Store, trees};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// This user's decision on a team plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Served under `team.accept = "reviewed"` (and under any setting that accepts its publisher).
    Approved,
    /// Never served.
    Rejected,
}

/// A decision as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Reviewed {
    decision: Decision,
    /// When it was made (unix seconds).
    at: u64,
}

/// This user's decision on plan `id`, if any.
pub fn decision(store: &Store, id: &str) -> Result<Option<Decision>, Error> {
    Ok(store.get::<Reviewed>(trees::PLAN_REVIEWS, id.as_bytes())?.map(|r| r.decision))
}

/// Records a decision (buffered: the caller flushes).
fn record(store: &Store, id: &str, decision: Decision) -> Result<(), Error> {
    store.put(trees::PLAN_REVIEWS, id.as_bytes(), &Reviewed { decision, at: now() })?;
    Ok(())
}

/// The serving rule of one user: their `team.accept` and database role.
#[derive(Debug, Clone)]
pub struct Policy {
    accept: Accept,
    me: Option<String>,
}

impl Policy {
    /// The rule the user's team settings give.
    pub fn of(team: &TeamConfig) -> Policy {
        Policy { accept: team.accept.clone(), me: team.role() }
    }

    /// Whether a plan is this user's own: not from the team, or published under this user's role.
    pub fn own(&self, p: &Provenance) -> bool {
        match &p.team {
            None => true,
            Some(t) => self.me.is_some() && t.publisher == self.me,
        }
    }

    /// Why a plan with this provenance and decision may not be served, or None when it may.
    pub fn refusal_of(&self, p: &Provenance, decision: Option<Decision>) -> Option<String> {
        if self.own(p) {
            return None;
        }
        if decision == Some(Decision::Rejected) {
            return Some("you rejected it with `refrain plans review --reject`".into());
        }
        let publisher = p.team.as_ref().and_then(|t| t.publisher.as_deref());
        match &self.accept {
            Accept::Everyone => None,
            Accept::Reviewed if decision == Some(Decision::Approved) => None,
            Accept::Reviewed => {
                Some("team.accept = \"reviewed\" and you have not approved it; see `refrain plans review`".into())
            }
            Accept::Publishers(names) => match publisher {
                Some(p) if names.iter().any(|n| n == p) => None,
                Some(p) => Some(format!("team.accept does not list its publisher {p}")),
                None => Some("its publisher is unknown and team.accept lists publishers".into()),
            },
        }
    }

    /// Why plan `id` may not be served to this user, or None. Reads the record only for a plan
    /// from the team that the setting or a decision may refuse.
    pub fn refusal(&self, store: &Store, id: &str) -> Result<Option<String>, Error> {
        if !library::team_shared(store, id)? {
            return Ok(None);
        }
        let decided = decision(store, id)?;
        if self.accept == Accept::Everyone && decided != Some(Decision::Rejected) {
            return Ok(None);
        }
        let Some(rec) = library::get(store, id)? else { return Ok(None) };
        Ok(self.refusal_of(&rec.plan.provenance, decided))
    }

    /// Why a stored plan, already read, may not be served to this user, or None.
    pub fn refusal_of_plan(&self, store: &Store, plan: &StoredPlan) -> Result<Option<String>, Error> {
        Ok(self.refusal_of(&plan.provenance, decision(store, &plan.id)?))
    }

    /// Whether a team plan waits for this user's review: someone else's, not yet decided, from a
    /// publisher the setting would otherwise accept.
    fn pending(&self, store: &Store, rec: &Record) -> Result<bool, Error> {
        let p = &rec.plan.provenance;
        if p.team.is_none() || self.own(p) || decision(store, &rec.plan.id)?.is_some() {
            return Ok(false);
        }
        Ok(match &self.accept {
            Accept::Everyone | Accept::Reviewed => true,
            Accept::Publishers(_) => self.refusal_of(p, None).is_none(),
        })
    }
}

/// The team plans waiting for this user's review, in id order, at most `limit`.
pub fn pending(store: &Store, policy: &Policy, limit: usize) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    for rec in library::list(store, usize::MAX, |p| p.provenance.team.is_some())? {
        if out.len() >= limit {
            break;
        }
        if policy.pending(store, &rec)? {
            out.push(rec);
        }
    }
    Ok(out)
}

/// Records this user's decision on a team plan given by id or unique prefix; returns the plan.
/// Refuses a plan that is not from the team or is this user's own (always served).
pub fn decide(store: &Store, policy: &Policy, id: &str, decision: Decision) -> Result<Record, Error> {
    let full = library::resolve(store, id)?.ok_or_else(|| Error::NotFound(id.to_string()))?;
    let rec = library::get(store, &full)?.ok_or_else(|| Error::NotFound(id.to_string()))?;
    if rec.plan.provenance.team.is_none() || policy.own(&rec.plan.provenance) {
        return Err(Error::Invalid(format!(
            "plan {full} is your own, not a team member's: your own plans are always served; \
             `refrain plans evict --id {full}` removes it"
        )));
    }
    record(store, &full, decision)?;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::key::IntentKey;
    use crate::plan::template::TeamOrigin;

    fn prov(publisher: Option<&str>) -> Provenance {
        Provenance {
            source: "trace".into(),
            task: "set up the dev env".into(),
            confidence: None,
            by: Some("bob@laptop".into()),
            team: publisher.map(|p| TeamOrigin { publisher: Some(p.into()), published_at: None }),
        }
    }

    fn policy(accept: Accept) -> Policy {
        Policy { accept, me: Some("bob".into()) }
    }

    #[test]
    fn each_setting_serves_whose_plans_it_says_and_never_a_rejected_one() {
        let (alice, carol) = (prov(Some("alice")), prov(Some("carol")));
        let everyone = policy(Accept::Everyone);
        assert_eq!(everyone.refusal_of(&alice, None), None);
        assert!(everyone.refusal_of(&alice, Some(Decision::Rejected)).unwrap().contains("rejected"));

        let reviewed = policy(Accept::Reviewed);
        assert!(reviewed.refusal_of(&alice, None).unwrap().contains("refrain plans review"));
        assert_eq!(reviewed.refusal_of(&alice, Some(Decision::Approved)), None);
        assert!(reviewed.refusal_of(&alice, Some(Decision::Rejected)).is_some());

        let listed = policy(Accept::Publishers(vec!["alice".into()]));
        assert_eq!(listed.refusal_of(&alice, None), None);
        assert!(listed.refusal_of(&carol, None).unwrap().contains("publisher carol"));
        assert!(listed.refusal_of(&carol, Some(Decision::Approved)).is_some(), "approval does not widen the list");
        assert!(listed.refusal_of(&prov(None), None).is_none(), "a plan of this machine");
    }

    #[test]
    fn this_users_own_plans_are_never_filtered() {
        for accept in [Accept::Reviewed, Accept::Publishers(vec![])] {
            let p = policy(accept);
            assert_eq!(p.refusal_of(&prov(None), None), None, "stored here");
            assert_eq!(p.refusal_of(&prov(Some("bob")), Some(Decision::Rejected)), None, "published by bob");
        }
        // Without a role (no team.url), only plans stored here are one's own.
        let anon = Policy { accept: Accept::Reviewed, me: None };
        assert!(anon.refusal_of(&prov(Some("bob")), None).is_some());
    }

    #[test]
    fn decisions_are_kept_and_only_on_others_team_plans() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let template =
            serde_json::from_value(serde_json::json!({"steps": [{"tool": "Bash", "inputs": {"command": "make"}}]}))
                .unwrap();
        let mut plan = StoredPlan::for_test("build it", IntentKey::new("build", "project"), template);
        let id = plan.id.clone();
        library::put(&s, &Record { plan: plan.clone(), vector: None }).unwrap();
        let p = policy(Accept::Reviewed);
        let err = decide(&s, &p, &id[..8], Decision::Approved).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("your own"), "{err}");
        plan.provenance.team = Some(TeamOrigin { publisher: Some("alice".into()), published_at: None });
        library::put(&s, &Record { plan, vector: None }).unwrap();
        assert_eq!(pending(&s, &p, 10).unwrap().len(), 1);
        decide(&s, &p, &id[..8], Decision::Approved).unwrap();
        assert_eq!(decision(&s, &id).unwrap(), Some(Decision::Approved));
        assert!(pending(&s, &p, 10).unwrap().is_empty());
        assert!(matches!(decide(&s, &p, "ffffffff", Decision::Rejected), Err(Error::NotFound(_))));
    }
}
