//! The plan cache: reuse a plan for every task of the same kind, and never for a different one.
//!
//! `mask` finds a task's values (`params` by type, `names` by shape and place, over `words`) and
//! masks them; `normalise` and `key` file a task in an intent bucket (organisation, never a
//! gate); `extract` generalises an executed trace; `head` is what lookup reads of a stored plan
//! (`headcode` its binary layout, `heads` where it is kept); `hits` batches hit stamps;
//! `align` fills its slots from a new task, `coverage` checks every value is accounted for;
//! `lookup` gathers candidates, gates them, asks the verifier and serves the first that fills and
//! validates (`fill`, `validate`, `report`); `accept` fills a suggested plan the agent accepted;
//! `library` keeps plans in the store; `service` stores and takes feedback; `review` says whose
//! team plans are served (`team.accept`, `refrain plans review`). Plain Rust, no rmcp types.

pub mod accept;
pub mod alias;
pub mod align;
pub mod canon;
pub mod coverage;
pub mod extract;
pub mod fill;
pub mod frame;
pub mod head;
pub mod headcode;
pub mod heads;
pub mod hits;
pub mod intake;
pub mod key;
pub mod lexicon;
pub mod library;
pub mod lookup;
pub mod mask;
pub mod names;
pub mod normalise;
pub mod params;
pub mod report;
pub mod review;
pub mod risk;
pub mod service;
pub mod spelling;
pub mod template;
pub mod validate;
pub mod words;

#[cfg(test)]
mod tests;

/// Version of the normaliser (lexicon + rules); part of every bucket key.
pub const NORMALISER_VERSION: u32 = 1;
/// Version of the trace extractor.
pub const EXTRACTOR_VERSION: u32 = 1;

/// Plan cache errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    /// The vector index failed.
    #[error(transparent)]
    Index(#[from] crate::index::Error),
    /// The request is malformed (the caller can fix it).
    #[error("{0}")]
    Invalid(String),
    /// The caller's bucket key disagrees with the one refrain computed.
    #[error(
        "the key {given} disagrees with the key refrain computes for this task ({computed}); omit `key` or send {computed}"
    )]
    KeyMismatch {
        /// Sent by the caller.
        given: String,
        /// Computed by refrain.
        computed: String,
    },
    /// The trace could not be generalised.
    #[error("cannot make a reusable plan from this trace: {0}")]
    Refused(String),
    /// No plan with this id.
    #[error("no plan with id {0}; list plans with `refrain plans list`")]
    NotFound(String),
    /// `plan_lookup` was asked to accept a plan this project's library does not hold.
    #[error(
        "no plan with id {0} in this project's plan library; pass as `plan_id` the `suggestion.plan_id` a plan_lookup in this project returned, or leave `plan_id` out to look the task up"
    )]
    NoSuchSuggestion(String),
    /// `plan_lookup` was asked to accept a quarantined plan.
    #[error(
        "plan {id} is quarantined ({why}) and cannot be accepted; leave `plan_id` out, or release it with plan_feedback outcome `release` if it works"
    )]
    QuarantinedSuggestion {
        /// The plan.
        id: String,
        /// Why it is quarantined.
        why: String,
    },
    /// `plan_lookup` was asked to accept a team plan this user's settings do not serve.
    #[error("plan {id} is a team plan your settings do not serve ({why}); leave `plan_id` out to look the task up")]
    NotAccepted {
        /// The plan.
        id: String,
        /// Why it is not served.
        why: String,
    },
    /// An accepted plan fails a validation stage the caller's values or caps decide.
    #[error("plan {id} cannot be served as asked: `{stage}` failed: {detail}")]
    NotServable {
        /// The plan.
        id: String,
        /// The stage.
        stage: String,
        /// Why.
        detail: String,
    },
}

impl Error {
    /// Whether the caller can fix it (as opposed to an infrastructure failure).
    pub fn is_caller_fixable(&self) -> bool {
        matches!(
            self,
            Error::Invalid(_)
                | Error::KeyMismatch { .. }
                | Error::Refused(_)
                | Error::NotFound(_)
                | Error::NoSuchSuggestion(_)
                | Error::QuarantinedSuggestion { .. }
                | Error::NotAccepted { .. }
                | Error::NotServable { .. }
                | Error::Store(crate::store::Error::Full { .. })
        )
    }
}
