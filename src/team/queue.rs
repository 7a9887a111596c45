//! The local side of sharing: changes for the team library wait in the store (`TEAM_QUEUE`) until
//! the database takes them, so a database that is down, slow or restarting loses nothing and a
//! refrain restart neither; `TEAM_KNOWN` says which plans the team has (or will have once the
//! queue drains), and the revision read so far is kept in `META`.
//!
//! Each queued change carries an id of its own, which the database records when it applies it,
//! so one sent again after a crash applies once.

use super::Error;
use crate::plan::library::Outcome;
use crate::store::{Key, Store, trees};
use serde::{Deserialize, Serialize};

/// A change for the team library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Change {
    /// Publish the local plan with this id (as it is when the change is sent).
    Publish {
        /// The plan id.
        id: String,
    },
    /// Count an outcome of a team plan.
    Feedback {
        /// The plan id.
        id: String,
        /// How it went.
        outcome: Outcome,
        /// What went wrong.
        reason: Option<String>,
        /// The member's `plans.quarantine_after`.
        quarantine_after: u32,
    },
}

/// A queued change and its operation id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queued {
    /// Unique id the database records when it applies the change.
    pub op: String,
    /// The change.
    pub change: Change,
}

pub use crate::plan::library::TeamKnown as Known;

/// Queues a change (the caller flushes).
pub fn push(store: &Store, change: Change) -> Result<(), Error> {
    let seq = store.next_id()?;
    let q = Queued { op: uuid::Uuid::new_v4().to_string(), change };
    store.put(trees::TEAM_QUEUE, &Key::new().u64(seq).into_bytes(), &q)?;
    Ok(())
}

/// The oldest queued changes with their keys, at most `limit`.
pub fn peek(store: &Store, limit: usize) -> Result<Vec<(Vec<u8>, Queued)>, Error> {
    let mut out = Vec::new();
    store.for_each(trees::TEAM_QUEUE, |k, q: Queued| {
        out.push((k.to_vec(), q));
        out.len() < limit
    })?;
    Ok(out)
}

/// Changes waiting.
pub fn len(store: &Store) -> Result<usize, Error> {
    Ok(store.len(trees::TEAM_QUEUE)?)
}

/// What the team knows of a plan.
pub fn known(store: &Store, id: &str) -> Result<Option<Known>, Error> {
    Ok(store.get(trees::TEAM_KNOWN, id.as_bytes())?)
}

/// Notes what the team knows of a plan.
pub fn set_known(store: &Store, id: &str, k: Known) -> Result<(), Error> {
    store.put(trees::TEAM_KNOWN, id.as_bytes(), &k)?;
    Ok(())
}

/// Forgets what the team knows of a plan (a queued publish that was not sent).
pub fn forget(store: &Store, id: &str) -> Result<(), Error> {
    store.remove(trees::TEAM_KNOWN, id.as_bytes())?;
    Ok(())
}

/// How long the database keeps applied operation ids (`shared::prune_ops`).
pub const OPS_KEEP_DAYS: i32 = 30;
/// A change first sent longer ago than this may have been applied and its id pruned since: it is
/// dropped rather than risk counting it twice (a day short of the database's bound).
const STALE_SECS: u64 = (OPS_KEEP_DAYS as u64 - 1) * 86_400;

fn tried_key(op: &str) -> Vec<u8> {
    format!("team_tried\0{op}").into_bytes()
}

/// Notes, before a change is first sent, when that was (the caller flushes before sending), and
/// answers whether it was first sent so long ago that it must be dropped (`STALE_SECS`).
pub fn try_send(store: &Store, op: &str, now: u64) -> Result<bool, Error> {
    match store.get::<u64>(trees::META, &tried_key(op))? {
        Some(first) => Ok(now.saturating_sub(first) > STALE_SECS),
        None => {
            store.put(trees::META, &tried_key(op), &now)?;
            Ok(false)
        }
    }
}

/// Removes a sent change and its note (the caller flushes).
pub fn sent(store: &Store, key: &[u8], op: &str) -> Result<(), Error> {
    store.remove(trees::TEAM_QUEUE, key)?;
    store.remove(trees::META, &tried_key(op))?;
    Ok(())
}

fn rev_key(place: &str) -> Vec<u8> {
    format!("team_rev\0{place}").into_bytes()
}

/// The revision read so far from one team library (`place`: database and project).
pub fn rev(store: &Store, place: &str) -> Result<i64, Error> {
    Ok(store.get(trees::META, &rev_key(place))?.unwrap_or(0))
}

/// Notes the revision read so far (the caller flushes).
pub fn set_rev(store: &Store, place: &str, rev: i64) -> Result<(), Error> {
    store.put(trees::META, &rev_key(place), &rev)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_keeps_order_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            for id in ["a", "b", "c"] {
                push(&store, Change::Publish { id: id.into() }).unwrap();
            }
            set_known(&store, "a", Known::Queued).unwrap();
            set_rev(&store, "db/p", 42).unwrap();
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let q = peek(&store, 10).unwrap();
        let ids: Vec<_> = q
            .iter()
            .map(|(_, q)| match &q.change {
                Change::Publish { id } => id.clone(),
                Change::Feedback { id, .. } => id.clone(),
            })
            .collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_ne!(q[0].1.op, q[1].1.op);
        sent(&store, &q[0].0, &q[0].1.op).unwrap();
        assert_eq!(len(&store).unwrap(), 2);
        assert_eq!(known(&store, "a").unwrap(), Some(Known::Queued));
        assert_eq!(rev(&store, "db/p").unwrap(), 42);
        assert_eq!(rev(&store, "db/other").unwrap(), 0);
    }

    #[test]
    fn a_change_first_sent_before_the_databases_bound_is_dropped_not_sent_twice() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let day = 86_400;
        assert!(!try_send(&store, "op1", 100 * day).unwrap(), "the first try is sent");
        assert!(!try_send(&store, "op1", 110 * day).unwrap(), "ten days later it is still sent");
        assert!(try_send(&store, "op1", 130 * day).unwrap(), "thirty days after the first try it is dropped");
        push(&store, Change::Publish { id: "p".into() }).unwrap();
        let (key, q) = peek(&store, 1).unwrap().remove(0);
        try_send(&store, &q.op, 0).unwrap();
        sent(&store, &key, &q.op).unwrap();
        assert_eq!(len(&store).unwrap(), 0);
        assert!(!try_send(&store, &q.op, 100 * day).unwrap(), "its note went with it");
    }
}
