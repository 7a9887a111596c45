//! One history file, read line by line (never whole): the requests and their reported usage,
//! every cache break between consecutive requests with its cause, repeated reads and prompts.
//!
//! Requests come from the transcript readers (`transcript::Stream`); a pair is explained with
//! `explain_cache_break`'s machinery only when the reported usage shows a break, or, without
//! usage, when something that can break the cache happened (model change, compaction, a pause
//! longer than the TTL). Memory holds the current context window, not the file, and no line
//! over `MAX_LINE_BYTES` (such a line is skipped and counted).

use super::breaks::{self, BreakRecord};
use super::model::{AgentKind, Tokens, Waste};
use super::observe::Observer;
use super::price::Price;
use super::sources::{HistoryFile, project_of};
use crate::prompt::rules::Rules;
use crate::transcript::lines::{Line, Lines, MAX_LINE_BYTES};
use crate::transcript::{Stream, Transcript};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// What the analysis needs besides the file.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// Provider rules (prices, TTLs).
    pub rules: &'a Rules,
    /// Ignore activity before this time (ms since the epoch).
    pub since_ms: Option<i64>,
}

/// A prompt the user gave, with the prompt tokens the requests answering it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The text (shortened).
    pub text: String,
    /// Line it was given on.
    pub line: usize,
    /// Prompt tokens of the requests until the next prompt.
    pub tokens: u64,
}

/// A file's figures: everything the report adds up.
#[derive(Debug, Clone, Default)]
pub struct FileSummary {
    /// Which agent wrote it.
    pub agent: Option<AgentKind>,
    /// The project (root) of the session.
    pub project: String,
    /// Bytes read.
    pub bytes: u64,
    /// Lines read.
    pub lines: u64,
    /// Lines that were not JSON.
    pub bad_lines: u64,
    /// Lines over `MAX_LINE_BYTES`, skipped unread.
    pub long_lines: u64,
    /// The model most requests went to (for prices of what refrain saved).
    pub model: String,
    /// Per UTC day: tokens and waste.
    pub days: BTreeMap<String, (Tokens, Waste)>,
    /// Every cache break.
    pub breaks: Vec<BreakRecord>,
    /// Repeated reads per file: (count, tokens, usd).
    pub reads: BTreeMap<String, (u64, u64, f64)>,
    /// The user's prompts.
    pub prompts: Vec<Prompt>,
    /// Repeated unchanged reads, each counted once per later request that would have sent it
    /// again (until the session's end or its next compaction).
    pub carried_reads: u64,
    /// Their tokens, counted the same way.
    pub carried_read_tokens: u64,
}

/// Reads one history file; `progress` is told about every chunk of bytes read. A line over
/// `MAX_LINE_BYTES` is read past and counted in `long_lines`, so memory stays bounded by the cap.
pub fn analyze(file: &HistoryFile, ctx: Ctx<'_>, progress: &dyn Fn(u64)) -> std::io::Result<FileSummary> {
    analyze_capped(file, ctx, progress, MAX_LINE_BYTES)
}

fn analyze_capped(
    file: &HistoryFile,
    ctx: Ctx<'_>,
    progress: &dyn Fn(u64),
    cap: usize,
) -> std::io::Result<FileSummary> {
    let f = std::fs::File::open(&file.path)?;
    let mut lines = Lines::new(std::io::BufReader::with_capacity(1 << 18, f), cap);
    let mut s = State::new(file, ctx);
    while let Some((line, n)) = lines.next_line()? {
        progress(n);
        s.out.bytes += n;
        match line {
            Line::Kept(raw) => s.line(raw),
            Line::TooLong => s.stream.skip_long_line(),
        }
    }
    Ok(s.finish())
}

struct State<'a> {
    ctx: Ctx<'a>,
    agent: AgentKind,
    stream: Stream,
    obs: Observer,
    out: FileSummary,
    /// Turns accounted so far.
    done: usize,
    /// Whether the file is a subagent's own (every message on a side chain), decided at the first message.
    sidechain_file: Option<bool>,
    /// Side-chain requests inside a main file: message id -> (time, model, usage). Counted, not explained.
    side_usage: HashMap<String, (Option<i64>, String, crate::prompt::request::Usage)>,
    models: HashMap<String, u64>,
    fallback_day: String,
    /// What to call the project when no line names the working directory.
    unknown_project: String,
    /// Repeats of the main conversation not yet settled: count, count x request, tokens,
    /// tokens x request (the request each was read at).
    pending: [u64; 4],
}

impl<'a> State<'a> {
    fn new(file: &HistoryFile, ctx: Ctx<'a>) -> State<'a> {
        State {
            ctx,
            agent: file.agent,
            stream: Stream::new(),
            obs: Observer::default(),
            out: FileSummary { agent: Some(file.agent), ..FileSummary::default() },
            done: 0,
            sidechain_file: None,
            side_usage: HashMap::new(),
            models: HashMap::new(),
            fallback_day: day_of(file.mtime_ms),
            unknown_project: unknown_project(file),
            pending: [0; 4],
        }
    }

    fn line(&mut self, raw: &[u8]) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            self.stream.skip_line(false);
            return;
        }
        let Ok(mut v) = serde_json::from_slice::<Value>(raw) else {
            self.stream.skip_line(true);
            return;
        };
        let ts = crate::transcript::ts(&v);
        let in_range = self.ctx.since_ms.is_none_or(|s| ts.is_none_or(|t| t >= s));
        let seen = match self.agent {
            AgentKind::ClaudeCode => {
                if self.side_chain(&mut v) {
                    self.stream.feed_value(&v);
                    // A subagent's conversation inline: its reads are judged in a window of its
                    // own (the observer keeps one per subagent); it asks no prompt of the user.
                    let seen = self.obs.claude(&v);
                    if in_range && !seen.repeats.is_empty() {
                        self.repeats(seen.repeats, ts, false);
                    }
                    return;
                }
                self.obs.claude(&v)
            }
            AgentKind::Codex => self.obs.codex(&v),
        };
        let line = self.stream.line_no() + 1;
        self.stream.feed_value(&v);
        if in_range {
            if let Some(text) = seen.prompt {
                self.out.prompts.push(Prompt { text, line, tokens: 0 });
            }
            if !seen.repeats.is_empty() {
                self.repeats(seen.repeats, ts, true);
            }
        }
        if seen.compacted {
            // Every request made so far (the last turn included) sent what was read before it.
            self.settle(self.done as u64 + 1);
        }
        self.account_complete_turns(false);
    }

    /// Ends the pending repeats' carriage here (a compaction, or the end of the file): each would
    /// have been sent with every request from the one after its read up to now.
    fn settle(&mut self, at: u64) {
        let [n, n_at, t, t_at] = std::mem::take(&mut self.pending);
        self.out.carried_reads += (n * at).saturating_sub(n_at);
        self.out.carried_read_tokens += (t * at).saturating_sub(t_at);
    }

    /// Accounts reads that repeated an unchanged read. Those of the main conversation (`main`) are
    /// carried by its later requests; a subagent's inline ones by one request (its own requests
    /// are not told apart here).
    fn repeats(&mut self, repeats: Vec<super::reads::Repeat>, ts: Option<i64>, main: bool) {
        let day = ts.map(day_of).unwrap_or_else(|| self.fallback_day.clone());
        let price = self.price(&self.current_model());
        // The turns before the one that made the call are accounted; the request after it is the
        // first to send the result.
        let at = self.done as u64 + 1;
        for r in repeats {
            if main {
                let p = &mut self.pending;
                p[0] += 1;
                p[1] += at;
                p[2] += r.tokens;
                p[3] += r.tokens * at;
            } else {
                self.out.carried_reads += 1;
                self.out.carried_read_tokens += r.tokens;
            }
            let usd = price.added(r.tokens);
            let e = self.out.reads.entry(r.path).or_default();
            *e = (e.0 + 1, e.1 + r.tokens, e.2 + usd);
            let w = &mut self.out.days.entry(day.clone()).or_default().1;
            w.repeated_reads += 1;
            w.repeated_read_tokens += r.tokens;
            w.repeated_read_usd += usd;
        }
    }

    /// Handles subagent lines; true when the line was a side-chain line of a main file (counted
    /// for usage only). A subagent's own file is read as a conversation of its own.
    fn side_chain(&mut self, v: &mut Value) -> bool {
        if v.get("message").is_none() {
            return false;
        }
        let side = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let own = *self.sidechain_file.get_or_insert(side);
        if !side {
            return false;
        }
        if own {
            if let Some(o) = v.as_object_mut() {
                o.insert("isSidechain".into(), Value::Bool(false));
            }
            return false;
        }
        let m = v.get("message");
        if let (Some(id), Some(u)) = (
            m.and_then(|m| m.get("id")).and_then(Value::as_str),
            m.and_then(|m| m.get("usage")).and_then(crate::prompt::request::Usage::from_json),
        ) {
            let model = m.and_then(|m| m.get("model")).and_then(Value::as_str).unwrap_or_default().to_string();
            if self.side_usage.len() < 100_000 {
                self.side_usage.insert(id.to_string(), (crate::transcript::ts(v), model, u));
            }
        }
        true
    }

    fn current_model(&self) -> String {
        self.stream.transcript().map(|t| t.model().to_string()).unwrap_or_default()
    }

    fn price(&self, model: &str) -> Price {
        let provider = match self.agent {
            AgentKind::ClaudeCode => crate::prompt::Provider::Anthropic,
            AgentKind::Codex => crate::prompt::Provider::OpenAiResponses,
        };
        Price::of(self.ctx.rules, provider, model)
    }

    /// Accounts every turn that is complete: one whose successor started (or all at the end).
    fn account_complete_turns(&mut self, all: bool) {
        let Some(t) = self.stream.transcript() else { return };
        let n = t.turns.len();
        let upto = if all { n } else { n.saturating_sub(1) };
        while self.done < upto {
            let i = self.done;
            account_turn(t, i, self.ctx, &mut self.out, &mut self.models, &self.fallback_day);
            self.done += 1;
        }
        if self.done > 0 && !all {
            self.stream.forget_before(self.done - 1);
        }
    }

    fn finish(mut self) -> FileSummary {
        self.account_complete_turns(true);
        self.settle(self.done as u64);
        for (_, (ts, model, u)) in std::mem::take(&mut self.side_usage) {
            if self.ctx.since_ms.is_some_and(|s| ts.is_some_and(|t| t < s)) {
                continue;
            }
            let day = ts.map(day_of).unwrap_or_else(|| self.fallback_day.clone());
            let tokens = self.price(&model).tokens(&u);
            self.out.days.entry(day).or_default().0.add(&tokens);
        }
        self.out.lines = self.stream.lines as u64;
        self.out.bad_lines = self.stream.bad_lines as u64;
        self.out.long_lines = self.stream.long_lines as u64;
        self.out.model =
            self.models.iter().max_by_key(|(m, n)| (**n, (*m).clone())).map(|(m, _)| m.clone()).unwrap_or_default();
        self.out.project = match self.obs.cwd.as_deref() {
            Some(cwd) => project_of(cwd),
            None => self.unknown_project.clone(),
        };
        self.out
    }
}

/// Adds turn `i`'s usage, its tokens to the prompt it answers, and the break before it, if any.
fn account_turn(
    t: &Transcript,
    i: usize,
    ctx: Ctx<'_>,
    out: &mut FileSummary,
    models: &mut HashMap<String, u64>,
    fallback_day: &str,
) {
    let turn = &t.turns[i];
    if ctx.since_ms.is_some_and(|s| turn.timestamp_ms.is_some_and(|ts| ts < s)) {
        return;
    }
    let day = turn.timestamp_ms.map(day_of).unwrap_or_else(|| fallback_day.to_string());
    let price = Price::of(ctx.rules, t.provider, &turn.model);
    if let Some(u) = &turn.usage {
        let tokens = price.tokens(u);
        if let Some(p) = out.prompts.iter_mut().rev().find(|p| p.line < turn.line) {
            p.tokens += tokens.prompt();
        }
        *models.entry(turn.model.clone()).or_default() += 1;
        out.days.entry(day.clone()).or_default().0.add(&tokens);
    }
    if i == 0 {
        return;
    }
    if let Some(b) = breaks::between(t, i, ctx.rules, price, day.clone()) {
        let w = &mut out.days.entry(day).or_default().1;
        w.breaks += 1;
        w.break_tokens += b.tokens;
        w.break_usd += b.usd;
        out.breaks.push(b);
    }
}

/// A name for a session whose lines never name their working directory: Claude Code's project
/// folder names it (the directory with `/` written as `-`, so only a guess when a name held a
/// `-`, hence the mark); Codex files its rollouts by date, which names no project.
fn unknown_project(file: &HistoryFile) -> String {
    let folder = file.path.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
    match (file.agent, folder) {
        (AgentKind::ClaudeCode, Some(f)) if f.starts_with('-') => format!("{} (from folder name)", f.replace('-', "/")),
        (AgentKind::ClaudeCode, Some(f)) => format!("(unknown: Claude Code folder {f})"),
        (AgentKind::Codex, _) => "(unknown: Codex sessions without a working directory)".into(),
        (_, None) => "(unknown)".into(),
    }
}

/// The UTC date of a time in ms since the epoch (`YYYY-MM-DD`).
pub fn day_of(ms: i64) -> String {
    crate::days::of_ms(ms)
}

/// RFC 3339 (UTC, seconds) of a time in ms since the epoch.
pub fn timestamp_of(ms: i64) -> String {
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{}T{:02}:{:02}:{:02}Z", day_of(ms), secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_dates() {
        assert_eq!(timestamp_of(1_795_311_205_117), "2026-11-22T01:33:25Z");
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(1_795_311_205_117), "2026-11-22");
        assert_eq!(day_of(1_749_895_200_000), "2025-06-14");
        assert_eq!(day_of(-1), "1969-12-31");
    }

    /// The fixture with a line of `filler` bytes (a huge tool output) after its second line.
    fn with_long_line(rel: &str, agent: AgentKind, line: &str) -> (tempfile::TempDir, HistoryFile) {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts").join(rel),
        )
        .unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(2, line);
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("rollout-1.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        (d, HistoryFile { size: 0, mtime_ms: 0, agent, path })
    }

    #[test]
    fn a_line_over_the_cap_is_skipped_and_counted_and_the_rest_still_adds_up() {
        let rules = Rules::builtin();
        let ctx = Ctx { rules: &rules, since_ms: None };
        let big = "y".repeat(100_000);
        let claude = serde_json::json!({"type": "user", "timestamp": "2025-06-14T10:00:00Z", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": big}]}});
        let codex = serde_json::json!({"timestamp": "2026-11-22T01:38:10.000Z", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c", "output": big}});
        for (rel, agent, line) in [
            ("ccusage/claude-project-alpha-chat.jsonl", AgentKind::ClaudeCode, claude),
            ("captured/codex-rollout-with-compaction.jsonl", AgentKind::Codex, codex),
        ] {
            let (_d, file) = with_long_line(rel, agent, &line.to_string());
            let whole = analyze_capped(&file, ctx, &|_| {}, 1 << 20).unwrap();
            let capped = analyze_capped(&file, ctx, &|_| {}, 64 << 10).unwrap();
            assert_eq!((whole.long_lines, capped.long_lines), (0, 1), "{rel}");
            assert_eq!(capped.lines, whole.lines, "{rel}: the skipped line still counts as a line");
            assert_eq!(capped.bytes, whole.bytes, "{rel}: its bytes were read past");
            let requests = |s: &FileSummary| s.days.values().map(|(t, _)| t.requests).sum::<u64>();
            assert!(requests(&whole) > 0);
            assert_eq!(requests(&capped), requests(&whole), "{rel}: the other lines' usage is all there");
        }
    }
}
