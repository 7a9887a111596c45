//! `refrain-bench dedup [PATH...]`: how many reads refrain's read dedup would have answered with
//! a note, and the tokens saved, replaying recorded Claude Code transcripts and Codex rollouts
//! (default: the transcripts under tests/fixtures/transcripts). Each read is judged from what came
//! before it in its own session, exactly as the post-tool hook judges it.

use refrain::hooks::Agent;
use refrain::hooks::dedup::{self, Replayed};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Totals over one session file or over all of them.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Tally {
    /// Sessions replayed.
    pub sessions: usize,
    /// Reads of one file (read tool or cat/head/tail/sed -n) with a known output.
    pub reads: usize,
    /// Estimated tokens of those reads' outputs.
    pub read_tokens: u64,
    /// Reads a note would have answered (file unchanged).
    pub unchanged: usize,
    /// Reads a diff would have answered (file changed a little).
    pub diffs: usize,
    /// Estimated tokens the notes and diffs save.
    pub tokens_saved: u64,
}

impl Tally {
    fn add(&mut self, r: &[Replayed]) {
        self.sessions += 1;
        for x in r {
            self.reads += 1;
            self.read_tokens += x.tokens;
            if let Some(s) = x.saved {
                self.tokens_saved += s;
                if x.changed { self.diffs += 1 } else { self.unchanged += 1 }
            }
        }
    }

    fn merge(&mut self, o: &Tally) {
        self.sessions += o.sessions;
        self.reads += o.reads;
        self.read_tokens += o.read_tokens;
        self.unchanged += o.unchanged;
        self.diffs += o.diffs;
        self.tokens_saved += o.tokens_saved;
    }
}

/// Replays every `.jsonl` under `paths`; prints one row per file and the total.
pub fn run(paths: &[PathBuf], json: bool) -> anyhow::Result<Tally> {
    let default = [Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/transcripts")];
    let roots: &[PathBuf] = if paths.is_empty() { &default } else { paths };
    let mut files = Vec::new();
    for r in roots {
        collect(r, &mut files);
    }
    files.sort();
    let mut out = std::io::stdout().lock();
    let mut total = Tally::default();
    for f in &files {
        let Some(lines) = dedup::read_lines(&f.to_string_lossy()) else { continue };
        let agent = if is_rollout(&lines) { Agent::Codex } else { Agent::Claude };
        let mut t = Tally::default();
        t.add(&dedup::replay(agent, &lines));
        if !json {
            writeln!(
                out,
                "{:<60} {:>6} reads {:>8} tokens {:>4} notes {:>3} diffs {:>7} saved",
                f.display().to_string(),
                t.reads,
                t.read_tokens,
                t.unchanged,
                t.diffs,
                t.tokens_saved
            )?;
        }
        total.merge(&t);
    }
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&total)?)?;
    } else {
        let share = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        writeln!(
            out,
            "total: {} sessions, {} reads ({} tokens); {} answered by a note, {} by a diff; {} tokens saved ({:.1}% of read tokens)",
            total.sessions,
            total.reads,
            total.read_tokens,
            total.unchanged,
            total.diffs,
            total.tokens_saved,
            share(total.tokens_saved, total.read_tokens)
        )?;
    }
    Ok(total)
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_file() && p.extension().is_some_and(|e| e == "jsonl") {
        out.push(p.to_path_buf());
    } else if let Ok(list) = std::fs::read_dir(p) {
        for e in list.flatten() {
            collect(&e.path(), out);
        }
    }
}

/// A Codex rollout (`session_meta`, `response_item` records) rather than a Claude Code transcript.
fn is_rollout(lines: &[Value]) -> bool {
    lines
        .iter()
        .take(5)
        .any(|l| matches!(l.get("type").and_then(Value::as_str), Some("session_meta" | "response_item")))
}
