//! `refrain report`: reads the agents' history on this machine and refrain's stores, prints a
//! one-screen summary (or `--json`), and writes the page with `--html FILE`.
//!
//! Why indicatif for the progress bar: the standard crate for it, drawn on stderr and only when
//! stderr is a terminal (pipes and CI logs stay clean); default features off (no unicode-width
//! tables), since the bar shows ASCII only.

mod stores;

use super::GlobalArgs;
use crate::config::{Config, Overrides};
use crate::project::Project;
use crate::prompt::rules::Rules;
use crate::report::{self, AgentKind, Options, Report, Roots, aggregate, html};
use anyhow::Context;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// What to read (shared by `report` and `dashboard`).
#[derive(Debug, Args, Clone)]
pub struct HistoryArgs {
    /// Only activity since a date (2026-01-31) or an age (30d, 12h). With --project, only that
    /// project (the global --project flag).
    #[arg(long)]
    pub since: Option<String>,
    /// Only one agent's history: `claude` or `codex`.
    #[arg(long, value_parser = ["claude", "codex"])]
    pub agent: Option<String>,
    /// Claude Code's config directory, holding `projects/` (default: CLAUDE_CONFIG_DIR, else ~/.claude).
    #[arg(long, env = "CLAUDE_CONFIG_DIR", value_name = "DIR")]
    pub claude_dir: Option<PathBuf>,
    /// Codex's home, holding `sessions/` (default: CODEX_HOME, else ~/.codex).
    #[arg(long, env = "CODEX_HOME", value_name = "DIR")]
    pub codex_home: Option<PathBuf>,
    /// Do not read refrain's stores (no repeated-task lookups, no saved figures).
    #[arg(long)]
    pub no_stores: bool,
    /// History files read in parallel (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// `refrain report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    history: HistoryArgs,
    /// Print every figure as JSON instead of the summary.
    #[arg(long)]
    json: bool,
    /// Also write the report as one self-contained HTML page (charts included) to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also list the savings ledger's newest N lines per project (default 200): each
    /// intervention with the tokens it removed and added, so any figure can be audited.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "200")]
    ledger: Option<usize>,
}

/// Everything a report run needs, resolved once.
pub struct Plan {
    /// Filters and roots.
    pub options: Options,
    /// Provider rules.
    pub rules: Rules,
    /// The user's configuration (for the stores).
    pub config: Config,
    /// Flags to resolve each project's configuration with.
    pub flags: Overrides,
    /// Read stores.
    pub stores: bool,
    /// The `--since` text, for the report's filters.
    pub since_text: Option<String>,
    /// Ledger lines to list per project (`--ledger`; 0: none).
    pub ledger_lines: usize,
}

/// Resolves the flags into a plan.
pub fn plan(global: &GlobalArgs, args: &HistoryArgs) -> anyhow::Result<Plan> {
    let flags = Overrides {
        home: global.home.clone(),
        log_file: global.log_file.clone(),
        token: None,
        model_dir: global.model_dir.clone(),
    };
    let config = Config::load(None, &flags)?.config;
    let rules = Rules::load(config.prompt.rules_file.as_deref())?;
    let user_home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()).unwrap_or_default();
    let roots = Roots::defaults(&user_home, args.claude_dir.clone(), args.codex_home.clone());
    let since_ms = args.since.as_deref().map(|s| report::parse_since(s, report::now_ms())).transpose()?;
    let agent = match args.agent.as_deref() {
        Some("claude") => Some(AgentKind::ClaudeCode),
        Some("codex") => Some(AgentKind::Codex),
        _ => None,
    };
    let project = match &global.project {
        Some(p) => Some(Project::resolve(Some(p), &config.home())?.root.to_string_lossy().into_owned()),
        None => None,
    };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
    Ok(Plan {
        options: Options { roots, project, since_ms, agent, threads, tool_cost: tool_cost() },
        rules,
        config,
        flags,
        stores: !args.no_stores,
        since_text: args.since.clone(),
        ledger_lines: 0,
    })
}

/// Reads the history and the stores into a report; `cache` keeps unchanged files' figures.
pub async fn build(plan: &Plan, cache: Option<&mut report::Cache>, show_progress: bool) -> Report {
    let files = report::sources::discover(&plan.options.roots, plan.options.since_ms, plan.options.agent);
    let total: u64 = files.iter().map(|f| f.size).sum();
    let bar = progress_bar(total, show_progress);
    let tick = |n: u64| bar.inc(n);
    let (mut r, summaries) =
        tokio::task::block_in_place(|| report::analyze(&plan.options, &files, &plan.rules, cache, &tick));
    bar.finish_and_clear();
    r.filters = report::model::Filters {
        project: plan.options.project.clone(),
        since: plan.since_text.clone(),
        agent: plan.options.agent,
    };
    if plan.stores {
        let prompts = aggregate::prompts(&summaries);
        let models = aggregate::models(&summaries);
        let (tasks, rows) = stores::gather(plan, &prompts, &models).await;
        aggregate::stores(&mut r, tasks, rows);
    } else {
        r.notes.push("refrain's stores were not read (--no-stores): no repeated tasks, no saved figures".into());
    }
    if files.is_empty() {
        r.notes.push(format!(
            "no history found under {} or {}; point --claude-dir / --codex-home at the agents' directories",
            plan.options.roots.claude.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            plan.options.roots.codex.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
        ));
    }
    r
}

/// What refrain's default tool list costs each agent's requests, and a typical read note.
fn tool_cost() -> report::model::ToolCost {
    let default = crate::config::ServerConfig::default();
    let note = "[refrain] src/guide.md is unchanged since your read at message 12; 240 lines. That output is still \
                in your context above, so it is not repeated here.";
    report::model::ToolCost {
        claude_code: crate::tools::surface::per_request_tokens("claude-code", &default),
        codex: crate::tools::surface::per_request_tokens("codex", &default),
        note: crate::tokens::count(note),
    }
}

fn progress_bar(total: u64, show: bool) -> indicatif::ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "reading agent history {bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style.progress_chars("#>-"));
    }
    bar
}

/// Runs `refrain report`.
pub fn run(global: &GlobalArgs, args: ReportArgs) -> anyhow::Result<ExitCode> {
    let mut plan = plan(global, &args.history)?;
    plan.ledger_lines = args.ledger.unwrap_or(0);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let report = rt.block_on(build(&plan, None, true));
    if let Some(path) = &args.html {
        let page = html::render(&report, html::Mode::File)?;
        write_atomic(path, page.as_bytes()).with_context(|| format!("cannot write the page to {}", path.display()))?;
    }
    let out = if args.json { serde_json::to_string_pretty(&report)? } else { report::text::render(&report) };
    print_out(&if args.json { crate::term::json(&out) } else { crate::term::text(&out) })?;
    if let (Some(path), false) = (&args.html, args.json) {
        eprintln!("refrain: page written to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes through a temporary file in the same directory, then renames.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let tmp = dir.join(format!(".{}.tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("report.html")));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Prints to stdout (this command is not a stdio server).
fn print_out(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}
