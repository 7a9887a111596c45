//! The report's figures as data: what `--json` prints, what the terminal summary and the page
//! render. Plain serialisable types, no logic beyond adding figures up.

use serde::Serialize;
use std::collections::BTreeMap;

/// Which agent wrote a history file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// Claude Code (`<config dir>/projects/**/*.jsonl`).
    ClaudeCode,
    /// Codex CLI (`<codex home>/sessions/**/rollout-*.jsonl`).
    Codex,
}

impl AgentKind {
    /// The name users type (`--agent claude`, `--agent codex`).
    pub fn short(self) -> &'static str {
        match self {
            AgentKind::ClaudeCode => "claude",
            AgentKind::Codex => "codex",
        }
    }
}

/// Prompt tokens as the providers reported them, and what they cost (estimate).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tokens {
    /// Model requests with reported usage.
    pub requests: u64,
    /// Input tokens not read from the cache (cache misses).
    pub uncached: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Input tokens written to the cache.
    pub cache_write: u64,
    /// Estimated USD of all these input tokens at the rules table's prices.
    pub input_usd: f64,
}

impl Tokens {
    /// Adds another set of figures.
    pub fn add(&mut self, o: &Tokens) {
        self.requests += o.requests;
        self.uncached += o.uncached;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.input_usd += o.input_usd;
    }

    /// All prompt tokens.
    pub fn prompt(&self) -> u64 {
        self.uncached + self.cache_read + self.cache_write
    }
}

/// What was wasted: cache breaks and repeated reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Waste {
    /// Cache breaks found.
    pub breaks: u64,
    /// Cached tokens the breaks lost (written or paid again instead of read).
    pub break_tokens: u64,
    /// Estimated USD the breaks cost.
    pub break_usd: f64,
    /// Files read again, unchanged, in the same context window.
    pub repeated_reads: u64,
    /// Tokens those repeated reads added to the context.
    pub repeated_read_tokens: u64,
    /// Estimated USD of those tokens.
    pub repeated_read_usd: f64,
}

impl Waste {
    /// Adds another set of figures.
    pub fn add(&mut self, o: &Waste) {
        self.breaks += o.breaks;
        self.break_tokens += o.break_tokens;
        self.break_usd += o.break_usd;
        self.repeated_reads += o.repeated_reads;
        self.repeated_read_tokens += o.repeated_read_tokens;
        self.repeated_read_usd += o.repeated_read_usd;
    }
}

/// One day's figures (UTC dates).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Day {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Reported prompt tokens.
    pub tokens: Tokens,
    /// Waste found that day.
    pub waste: Waste,
}

/// One cause of cache breaks, over the whole history.
#[derive(Debug, Clone, Serialize)]
pub struct CauseRow {
    /// The cause kind (`idle_gap_exceeded`, `system_edited`, `compacted`...).
    pub kind: String,
    /// What it means, in words.
    pub label: String,
    /// Breaks with this as the main cause.
    pub breaks: u64,
    /// Cached tokens lost.
    pub tokens: u64,
    /// Estimated USD lost.
    pub usd: f64,
    /// How to avoid it.
    pub fix: String,
    /// One example, as explain_cache_break words it.
    pub example: String,
}

/// A file read again and again without a change.
#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    /// The file.
    pub path: String,
    /// The project it belongs to.
    pub project: String,
    /// Reads of it that repeated an unchanged read in the same context window.
    pub rereads: u64,
    /// Tokens those reads cost.
    pub tokens: u64,
    /// Estimated USD.
    pub usd: f64,
}

/// A prompt that would have hit a stored plan.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    /// The project.
    pub project: String,
    /// The prompt (shortened).
    pub prompt: String,
    /// How often it was given.
    pub times: u64,
    /// Prompt tokens the sessions spent on it.
    pub tokens: u64,
    /// The plan that would have been served.
    pub plan_id: String,
    /// The task that plan was stored for.
    pub plan_task: String,
}

/// What refrain's store for one project says it served.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreRow {
    /// The project root.
    pub project: String,
    /// `read` (opened here), `owner` (asked the running server) or `unreadable`.
    pub status: String,
    /// Why it could not be read, or how it was read.
    pub detail: String,
    /// Plans stored.
    pub plans: u64,
    /// Plans served.
    pub plan_hits: u64,
    /// Plans reported as wrong or failed (plan_feedback failures).
    pub wrong_hit_reports: u64,
    /// Results served by exact key.
    pub result_hits_exact: u64,
    /// Results served by meaning.
    pub result_hits_semantic: u64,
    /// Tokens the served results saved.
    pub tokens_saved: u64,
    /// Estimated USD saved.
    pub usd_saved: f64,
    /// Hits per tool (results) and `plan_lookup` (plans).
    pub hits_per_tool: BTreeMap<String, u64>,
    /// The savings ledger's totals: tokens removed, added, the tool list's cost per request,
    /// net (absent for a store written before the ledger existed, or unreadable).
    pub ledger: Option<crate::ledger::Totals>,
    /// The net tokens in dollars, at the ledger's price.
    pub usd_net: f64,
    /// With `--ledger`: the newest ledger lines, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ledger_lines: Vec<crate::ledger::Line>,
}

/// What refrain's tool list costs one request of each agent the report reads (Claude Code defers
/// MCP tools and pays their names; Codex pays the full definitions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ToolCost {
    /// Tokens per Claude Code request.
    pub claude_code: u64,
    /// Tokens per Codex request.
    pub codex: u64,
    /// Tokens of the note that replaces a repeated read.
    pub note: u64,
}

impl ToolCost {
    /// The cost per request of `agent`.
    pub fn of(&self, agent: Option<AgentKind>) -> u64 {
        match agent {
            Some(AgentKind::Codex) => self.codex,
            _ => self.claude_code,
        }
    }
}

/// What refrain would net on the history read, by design: the repeated unchanged reads its notes
/// would remove, against its tool list on every request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WouldNet {
    /// Tokens of the repeated reads, less the notes that would replace them.
    pub removed: u64,
    /// Tokens of refrain's tool list over every request.
    pub fixed: u64,
    /// removed - fixed.
    pub net: i64,
    /// Sessions where refrain would cost more than it removes.
    pub sessions_negative: u64,
    /// Sessions read.
    pub sessions: u64,
    /// `removed` counted once per later request that would have sent it (until the session's end
    /// or its next compaction), as the tool list is: what a provider bills.
    pub carried_removed: u64,
    /// carried_removed - fixed.
    pub carried_net: i64,
    /// Sessions where refrain would cost more than it removes, counted carried.
    pub sessions_negative_carried: u64,
}

/// One project's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProjectRow {
    /// The project root (the git root of the sessions' working directory).
    pub root: String,
    /// Agents seen.
    pub agents: Vec<AgentKind>,
    /// Session files.
    pub sessions: u64,
    /// Reported prompt tokens.
    pub tokens: Tokens,
    /// Waste.
    pub waste: Waste,
    /// Prompts that would have hit a stored plan.
    pub repeated_tasks: u64,
    /// Prompt tokens spent on them.
    pub repeated_task_tokens: u64,
    /// What refrain's default setup would net on this project's history.
    pub would_net: WouldNet,
}

/// What was read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HistoryScan {
    /// Claude Code's projects directory, when found.
    pub claude_dir: Option<String>,
    /// Codex's sessions directory, when found.
    pub codex_dir: Option<String>,
    /// History files read.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// JSON lines read.
    pub lines: u64,
    /// Lines that were not JSON (skipped).
    pub bad_lines: u64,
    /// Lines too long to read in bounded memory (skipped).
    pub long_lines: u64,
    /// Files that could not be read, with why.
    pub unreadable: Vec<String>,
}

/// Totals over everything.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    /// Reported prompt tokens.
    pub tokens: Tokens,
    /// Waste.
    pub waste: Waste,
    /// Prompts that would have hit a stored plan.
    pub repeated_tasks: u64,
    /// Prompt tokens spent on them.
    pub repeated_task_tokens: u64,
    /// Plans served by refrain.
    pub plan_hits: u64,
    /// Results served by refrain.
    pub result_hits: u64,
    /// Tokens refrain's served results saved (gross: see `tokens_net`).
    pub tokens_saved: u64,
    /// Estimated USD saved (gross: see `usd_net`).
    pub usd_saved: f64,
    /// Wrong-hit reports (plans that failed when reused).
    pub wrong_hit_reports: u64,
    /// The ledger: tokens refrain kept out of agents' contexts.
    pub tokens_removed: u64,
    /// The ledger: tokens refrain put into them (notes, plans, suggestions, tool replies).
    pub tokens_added: u64,
    /// The ledger: tokens of refrain's tool list, paid on every request its hooks saw.
    pub tokens_fixed: u64,
    /// The ledger: model requests refrain's hooks saw.
    pub requests_seen: u64,
    /// removed - added - fixed: what refrain really saved (negative: it cost more).
    pub tokens_net: i64,
    /// The net in dollars (estimate).
    pub usd_net: f64,
    /// What refrain's default setup would net on the history read (notes for the repeated
    /// unchanged reads, against the tool list on every request).
    pub would_net: WouldNet,
}

/// The filters the report ran with.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Filters {
    /// Only this project (root).
    pub project: Option<String>,
    /// Only activity from this date on (`YYYY-MM-DD`, UTC).
    pub since: Option<String>,
    /// Only this agent.
    pub agent: Option<AgentKind>,
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// When it was made (RFC 3339, UTC).
    pub generated_at: String,
    /// How dollars were estimated.
    pub prices: String,
    /// Date of the provider rules the prices come from.
    pub rules_as_of: String,
    /// The filters.
    pub filters: Filters,
    /// What was read.
    pub history: HistoryScan,
    /// Totals.
    pub totals: Totals,
    /// Per day, oldest first.
    pub days: Vec<Day>,
    /// Per project, costliest waste first.
    pub projects: Vec<ProjectRow>,
    /// Causes of cache breaks, costliest first.
    pub causes: Vec<CauseRow>,
    /// Files read again unchanged, costliest first.
    pub repeated_files: Vec<FileRow>,
    /// Prompts that would have hit a stored plan, costliest first.
    pub repeated_tasks: Vec<TaskRow>,
    /// refrain's own stores: what they served.
    pub refrain: Vec<StoreRow>,
    /// Things the reader should know (stores not readable, files skipped...).
    pub notes: Vec<String>,
}
