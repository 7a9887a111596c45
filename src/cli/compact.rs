//! `refrain compact --transcript FILE --preset/--policy ...`: a compaction preview for people, or
//! `--json`. Runs the analysis directly; no project store is opened.

use crate::prompt::ReplacementLog;
use crate::transcript::Access;
use crate::transcript::analyze::{CompactInput, run_compact};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `refrain compact`.
#[derive(Debug, Args)]
pub struct CompactArgs {
    /// A Claude Code session or Codex rollout.
    #[arg(long, required_unless_present = "messages")]
    transcript: Option<PathBuf>,
    /// Or a JSON file holding an array of Anthropic-style messages.
    #[arg(long)]
    messages: Option<PathBuf>,
    /// Preset: anthropic_clear_tool_uses (default), claude_code_microcompact, agentcache.
    #[arg(long)]
    preset: Option<String>,
    /// Policy overrides as JSON, e.g. '{"keep_tool_uses": 2, "exclude_tools": ["Edit"]}'.
    #[arg(long)]
    policy: Option<String>,
    /// The log file of an earlier run (its decisions are replayed).
    #[arg(long)]
    log: Option<PathBuf>,
    /// Model id for prices.
    #[arg(long)]
    model: Option<String>,
    /// Include the compacted messages (JSON output).
    #[arg(long)]
    include_messages: bool,
    /// Provider rules file (default: prompt.rules_file from refrain.toml, else built in).
    #[arg(long)]
    rules: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(global: &super::GlobalArgs, args: CompactArgs) -> anyhow::Result<ExitCode> {
    let rules = super::prompt_rules(global, args.rules.as_deref())?;
    let policy =
        args.policy.as_deref().map(serde_json::from_str).transpose().context("--policy must be a JSON object")?;
    let log: Option<ReplacementLog> = match &args.log {
        Some(p) => Some(serde_json::from_str(
            &std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        )?),
        None => None,
    };
    let messages = match &args.messages {
        Some(p) => Some(serde_json::from_str(
            &std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        )?),
        None => None,
    };
    let input = CompactInput {
        messages,
        transcript: args.transcript,
        preset: args.preset,
        policy,
        log,
        include_messages: args.include_messages,
        model: args.model,
    };
    let plan = run_compact(&input, &rules, &Access::unrestricted())?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", crate::term::json(&serde_json::to_string_pretty(&plan)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let trig = if plan.triggered { "reached" } else { "not reached" };
    writeln!(
        out,
        "tokens {} -> {} (trigger {} tokens {trig}; {})",
        plan.tokens_before, plan.tokens_after, plan.policy.trigger_tokens, plan.counting
    )?;
    for (tool, t) in &plan.per_tool {
        writeln!(
            out,
            "  {}: {} results cleared, {} truncated, {} inputs cleared, ~{} tokens saved",
            crate::term::field(tool),
            t.results_cleared,
            t.results_truncated,
            t.inputs_cleared,
            t.tokens_saved
        )?;
    }
    writeln!(out, "{}", crate::term::text(&plan.cache.verdict))?;
    writeln!(
        out,
        "{} actions ({} replayed from the log); pass --json to get the log",
        plan.actions.len(),
        plan.actions.iter().filter(|a| a.replayed).count()
    )?;
    Ok(ExitCode::SUCCESS)
}
