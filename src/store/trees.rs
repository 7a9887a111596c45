//! The names of the store's trees: one per record kind. Add a kind here, nowhere else.

/// A sled tree name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeName(pub &'static str);

/// Store-wide metadata (schema version, index generation).
pub const META: TreeName = TreeName("meta");
/// Counters: hits, misses, tokens saved, per tool.
pub const STATS: TreeName = TreeName("stats");
/// Embedding vectors, the source the vector index is rebuilt from.
pub const VECTORS: TreeName = TreeName("vectors");
/// Scope tag + vector id -> nothing: vectors removed since their scope's graph was saved (a saved
/// graph holds its points' codes, so a scope loads from it and reads only what changed since).
pub const VECTORS_GONE: TreeName = TreeName("vectors_gone");
/// Plan templates by plan id.
pub const PLANS: TreeName = TreeName("plans");
/// Bucket key + plan id -> nothing: the plans of each intent bucket.
pub const PLAN_BUCKETS: TreeName = TreeName("plan_buckets");
/// Plan id -> the plan's compact head (what lookup's cheap gates read).
pub const PLAN_HEADS: TreeName = TreeName("plan_heads");
/// Hash of a task's text (as written, and masked) + plan id -> nothing: exact-text candidates.
pub const PLAN_TEXTS: TreeName = TreeName("plan_texts");
/// Term -> the ids of the plans whose task holds it, or that it is common (`plan::terms`).
pub const PLAN_TERMS: TreeName = TreeName("plan_terms");
/// Cached answers of the optional LLM canonicaliser.
pub const CANON: TreeName = TreeName("canon");
/// Cached results by exact key.
pub const RESPONSES: TreeName = TreeName("responses");
/// Last-use time + exact key -> nothing: the LRU order of results.
pub const RESPONSE_LRU: TreeName = TreeName("response_lru");
/// Dependency path + exact key -> nothing: which results depend on a file.
pub const RESPONSE_DEPS: TreeName = TreeName("response_deps");
/// Exact key -> LRU ticket, last use and hits of a result; plus the results' byte counters.
pub const RESPONSE_USE: TreeName = TreeName("response_use");
/// Hash of namespace + tool + normalised query -> exact key: results found by their exact text.
pub const RESPONSE_TEXTS: TreeName = TreeName("response_texts");
/// Exact key -> failure reports and the raised threshold of a result served by meaning.
pub const RESPONSE_FEEDBACK: TreeName = TreeName("response_feedback");
/// Cached answers of the optional LLM judge, per (stored, new) request pair.
pub const VERIFY_LLM: TreeName = TreeName("verify_llm");
/// Session events noted by hooks (compactions).
pub const EVENTS: TreeName = TreeName("events");
/// Sequence number -> a change for the team plan library not yet sent (survives a restart).
pub const TEAM_QUEUE: TreeName = TreeName("team_queue");
/// Plan id -> whether the team library has it (or a publish of it is queued).
pub const TEAM_KNOWN: TreeName = TreeName("team_known");

/// Time + kind + subject hash -> one line of the savings ledger (what an intervention removed
/// from and added to an agent's context).
pub const LEDGER: TreeName = TreeName("ledger");

/// Plan id -> the phrasing an agent accepted that plan for, until its outcome is reported.
pub const PLAN_PENDING: TreeName = TreeName("plan_pending");
/// Hash of a phrasing -> the plan the agent accepted it for and reported a success with (an alias).
pub const PLAN_ALIASES: TreeName = TreeName("plan_aliases");
/// Team plan id -> this user's decision on it in `refrain plans review` (approved or rejected).
/// Kept on this machine only, never sent to the team library.
pub const PLAN_REVIEWS: TreeName = TreeName("plan_reviews");

/// Every tree refrain writes (what a scan of the whole store must cover).
pub const ALL: [TreeName; 24] = [
    META,
    STATS,
    VECTORS,
    VECTORS_GONE,
    PLANS,
    PLAN_BUCKETS,
    PLAN_HEADS,
    PLAN_TEXTS,
    PLAN_TERMS,
    CANON,
    RESPONSES,
    RESPONSE_LRU,
    RESPONSE_DEPS,
    RESPONSE_USE,
    RESPONSE_TEXTS,
    RESPONSE_FEEDBACK,
    VERIFY_LLM,
    EVENTS,
    TEAM_QUEUE,
    TEAM_KNOWN,
    LEDGER,
    PLAN_PENDING,
    PLAN_ALIASES,
    PLAN_REVIEWS,
];
