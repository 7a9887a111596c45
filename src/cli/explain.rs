//! `refrain explain A.json B.json` / `refrain explain --transcript FILE`: the cache-break report
//! for people, or `--json`. Runs the analysis directly; no project store is opened.

use crate::prompt::explain::CacheBreak;
use crate::transcript::Access;
use crate::transcript::analyze::{ExplainInput, ExplainReport, run_explain};
use crate::transcript::session::SessionReport;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `refrain explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The earlier and later request bodies (JSON files).
    #[arg(num_args = 0..=2)]
    requests: Vec<PathBuf>,
    /// A Claude Code session or Codex rollout instead.
    #[arg(long)]
    transcript: Option<PathBuf>,
    /// Earlier turn of the transcript.
    #[arg(long)]
    from_turn: Option<usize>,
    /// Later turn of the transcript.
    #[arg(long)]
    to_turn: Option<usize>,
    /// Only the last two requests of the transcript.
    #[arg(long)]
    last_two: bool,
    /// Force the provider (anthropic, openai, openai_responses).
    #[arg(long)]
    provider: Option<String>,
    /// Provider rules file (default: prompt.rules_file from refrain.toml, else built in).
    #[arg(long)]
    rules: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(global: &super::GlobalArgs, args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let rules = super::prompt_rules(global, args.rules.as_deref())?;
    let read = |p: &PathBuf| -> anyhow::Result<serde_json::Value> {
        let text = std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", p.display()))
    };
    let (before, after) = match args.requests.as_slice() {
        [a, b] => (Some(read(a)?), Some(read(b)?)),
        [] => (None, None),
        _ => anyhow::bail!("give two request files, or --transcript FILE"),
    };
    let input = ExplainInput {
        before,
        after,
        provider: args.provider,
        transcript: args.transcript,
        from_turn: args.from_turn,
        to_turn: args.to_turn,
        last_two: args.last_two,
    };
    let report = run_explain(&input, &rules, &Access::unrestricted())?;
    let mut out = std::io::stdout().lock();
    // Verdicts, paths and divergent text come from the transcripts: escaped for the terminal.
    let text = match &report {
        _ if args.json => format!("{}\n", crate::term::json(&serde_json::to_string_pretty(&report)?)),
        ExplainReport::Pair(b) => crate::term::text(&render_break(b)).into_owned(),
        ExplainReport::Session(s) => crate::term::text(&render_session(s)).into_owned(),
    };
    write!(out, "{text}")?;
    Ok(ExitCode::SUCCESS)
}

/// A cache-break explanation as text.
pub fn render_break(b: &CacheBreak) -> String {
    let mut s = format!("{}\n", b.verdict);
    let t = &b.tokens;
    s += &format!(
        "  tokens: {} -> {} prompt; cached {} -> {}; lost {} (~${:.4} at {} ${}/MTok)\n",
        t.before_total,
        t.after_total,
        t.cached_before,
        t.cached_after,
        t.lost,
        b.cost.lost_usd,
        b.cost.family,
        b.cost.input_usd_per_mtok
    );
    if let Some(d) = &b.divergence {
        s += &format!(
            "  first divergence: {} level, {} (char {})\n    before: {}\n    after:  {}\n",
            d.level.name(),
            d.path,
            d.char_offset,
            one_line(&d.before),
            one_line(&d.after)
        );
    } else {
        s += "  no divergence: the later request only appends\n";
    }
    for c in &b.causes {
        s += &format!("  {}. [{:?}] {} (~{} tokens)\n     fix: {}\n", c.rank, c.kind, c.summary, c.tokens_lost, c.fix);
    }
    if let Some(r) = &b.reported {
        s += &format!("  reported: {}\n", r.note);
    }
    if let Some(g) = b.idle_gap_secs {
        s += &format!("  idle gap: {g}s\n");
    }
    s += &format!("  ({}; rules as of {})\n", t.counting, b.rules_as_of);
    s
}

fn render_session(r: &SessionReport) -> String {
    let e = &r.efficiency;
    let mut s = format!(
        "{:?} transcript: {} lines ({} unreadable), {} requests {:?}, {} compactions, {} side-chain messages\n",
        r.format, r.lines, r.bad_lines, r.turns, r.reconstruction, r.compactions, r.sidechain_messages
    );
    s += &format!(
        "reported usage over {} requests: {} prompt tokens, {} read from cache ({:.1}%), {} written\n",
        e.turns_with_usage,
        e.prompt_tokens,
        e.cache_read_tokens,
        e.cache_read_share * 100.0,
        e.cache_write_tokens
    );
    if r.breaks.is_empty() {
        s += "no cache break found\n";
    }
    for b in &r.breaks {
        s += &format!("\nturn {} -> {} (line {}, {:?}):\n", b.from_turn, b.to_turn, b.line, b.reconstruction);
        if let Some(x) = &b.explanation {
            s += &render_break(x);
        }
        if let Some(n) = &b.reported_note {
            s += &format!("  {n}\n");
        }
    }
    s
}

fn one_line(s: &str) -> String {
    s.replace('\n', "⏎")
}
