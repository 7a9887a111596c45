//! The plan cache: reuse a plan for every task of the same kind, and never for a different one.
//! Plain Rust, no rmcp types. The files, in the order a task goes through them:
//!
//! 1. **Reading a task.** `intake` checks sizes and redacts secrets; `standalone` refuses a task
//!    that only answers its conversation ("yes", "push"); `words` splits it with byte
//!    offsets; `params` finds typed values (paths, versions, flags, URLs...) and `names` the
//!    untyped ones (`run_server`, "the fn parse"); `mask` replaces both with placeholders.
//!    `normalise` reduces the task to an action and a target kind with `lexicon`'s tables, and
//!    `key` hashes that pair into a bucket: without a model, the bucket is how candidates are
//!    found, and `coverage` and `names` read `lexicon`'s stop words. `canon` optionally asks an
//!    LLM for the pair instead.
//! 2. **Storing.** `template` is a plan (steps, slots, provenance, counters); `extract` turns an
//!    executed trace into one; `service` stores it (and takes feedback); `library` keeps it in the
//!    store, with `head` (what a lookup reads of it), `headcode` (its bytes), `heads` (where
//!    heads live) and `terms` (the words of its task, to find it by); `alias` remembers a phrasing the agent proved to be a plan's task.
//! 3. **Looking up.** `lookup` gathers candidates (same text, aliases, nearest embeddings, the
//!    bucket), gates each (`align` fills its slots from the new task, `coverage` checks every
//!    value is used, `spelling` catches a stored value left in another spelling), asks the
//!    verifier, fills (`fill`) and validates (`validate`) the first that passes, and answers
//!    (`report`), a miss with near plans ordered by their cosine and the words they share with the
//!    task (`lexical`); `hits` batches hit stamps; `review` drops team plans the user does not accept
//!    (`team.accept`, `refrain plans review`) before any gate; `restraint` stops the prompt hook
//!    offering near plans in a project whose agent does not take them.
//! 4. **Handing over.** `frame` renders a plan as quoted, attributed data with `risk`'s marks on
//!    dangerous steps; `accept` fills a suggested plan the agent chose by id, and `respell` carries
//!    the new values into the stored values' other spellings in its steps.

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
pub mod kept;
pub mod key;
pub mod lexical;
pub mod lexicon;
pub mod library;
pub mod lookup;
pub mod mask;
pub mod names;
pub mod normalise;
pub mod params;
pub mod report;
pub mod respell;
pub mod restraint;
pub mod review;
pub mod risk;
pub mod service;
pub mod spelling;
pub mod standalone;
pub mod template;
pub mod terms;
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
