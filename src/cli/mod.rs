//! The command line: `serve` (the MCP server) and the commands people run by hand.
//!
//! Only the non-serve commands print to stdout. Each command lives in its own file.

mod bench;
mod compact;
mod config_cmd;
mod dashboard;
mod doctor;
mod explain;
mod hook;
mod index;
mod install;
mod mask;
mod plans;
mod report;
mod runtime_env;
mod serve;
mod team;
mod trust_cmd;

use crate::config::{Config, Overrides, Sourced};
use crate::project::Project;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// refrain: stop paying twice for the same agent work.
#[derive(Debug, Parser)]
#[command(name = "refrain", version, about)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// The project to serve (default: the git root of the working directory, else the working directory).
    #[arg(long, global = true, env = "REFRAIN_PROJECT")]
    pub project: Option<PathBuf>,
    /// Where refrain keeps its data (default: the user's data directory).
    #[arg(long, global = true)]
    pub home: Option<PathBuf>,
    /// Write logs to this file instead of stderr.
    #[arg(long, global = true)]
    pub log_file: Option<PathBuf>,
    /// Directory holding the embedding model and ONNX runtime.
    #[arg(long, global = true)]
    pub model_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the MCP server (stdio by default; --http for streamable HTTP and SSE).
    Serve(serve::ServeArgs),
    /// Print the resolved configuration, where each value came from and what was refused.
    Config(config_cmd::ConfigArgs),
    /// Allow the project's config file, exactly as it is now, to set what project files may not.
    Trust(trust_cmd::TrustArgs),
    /// The plan library: list, show, evict, export and import (JSON lines).
    Plans(plans::PlansArgs),
    /// The team plan library: `status` (settings, database, search; what is wrong and how to fix
    /// it) and `search` (the team's plans nearest a task).
    Team(team::TeamArgs),
    /// Run `refrain-bench` (the benchmarks, a separate binary) against this binary.
    Bench(bench::BenchArgs),
    /// Explain why the prompt cache broke: two request files, or a transcript.
    Explain(explain::ExplainArgs),
    /// Preview a cache-aware compaction of a transcript.
    Compact(compact::CompactArgs),
    /// What the agents' history on this machine wasted and why, and what refrain saved.
    Report(report::ReportArgs),
    /// The report as a live page on 127.0.0.1 (random port, token in the printed URL).
    Dashboard(dashboard::DashboardArgs),
    /// Register refrain (MCP server and hooks) with Claude Code, Codex, Gemini CLI, Qwen Code,
    /// opencode and Cursor.
    Install(install::InstallArgs),
    /// Is refrain doing its job here: registered with each agent, hooks firing, what each agent
    /// needs from you, the model verified, the store, refused settings, the team library.
    Doctor(doctor::DoctorArgs),
    /// Remove exactly what `install` added.
    Uninstall(install::UninstallArgs),
    /// The vector index: `rebuild` builds every scope's graph again from the store.
    Index(index::IndexArgs),
    /// Answer an agent hook: reads the hook payload on stdin (used by the installed hooks).
    Hook(hook::HookArgs),
    /// Mask the values of tasks read from stdin, one per line, as plan lookup does.
    Mask(mask::MaskArgs),
}

/// Parses the command line and runs the command.
pub fn main() -> anyhow::Result<ExitCode> {
    runtime_env::ensure();
    let cli = Cli::parse();
    check_patterns()?;
    match cli.command {
        Command::Serve(args) => serve::run(&cli.global, args),
        Command::Config(args) => config_cmd::run(&cli.global, args),
        Command::Trust(args) => trust_cmd::run(&cli.global, args),
        Command::Plans(args) => plans::run(&cli.global, args),
        Command::Team(args) => team::run(&cli.global, args),
        Command::Bench(args) => bench::run(&cli.global, args),
        Command::Explain(args) => explain::run(&cli.global, args),
        Command::Compact(args) => compact::run(&cli.global, args),
        Command::Report(args) => report::run(&cli.global, args),
        Command::Dashboard(args) => dashboard::run(&cli.global, args),
        Command::Install(args) => install::run_install(&cli.global, args),
        Command::Doctor(args) => doctor::run(&cli.global, args),
        Command::Uninstall(args) => install::run_uninstall(&cli.global, args),
        Command::Hook(args) => hook::run(&cli.global, args),
        Command::Index(args) => index::run(&cli.global, args),
        Command::Mask(args) => mask::run(args),
    }
}

/// Every built-in regex table compiles and catches its samples, or refrain does not start.
fn check_patterns() -> Result<usize, crate::patterns::Error> {
    let secrets = crate::results::secrets::RULES.iter().map(|r| r.pattern());
    let plans = crate::plan::params::PATTERNS
        .iter()
        .chain(crate::plan::fill::PATTERNS)
        .chain(crate::plan::mask::PATTERNS)
        .chain(crate::plan::kept::PATTERNS)
        .copied();
    crate::patterns::check_all(secrets.chain(plans))
}

fn flags(global: &GlobalArgs, token: Option<String>) -> Overrides {
    Overrides {
        home: global.home.clone(),
        log_file: global.log_file.clone(),
        token,
        model_dir: global.model_dir.clone(),
    }
}

/// refrain's home (its data directory) from the user's own settings only.
pub fn home(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    Ok(Config::load(None, &flags(global, None))?.config.home())
}

/// The project (its data dir under the user's home) and that home, from the user's own settings
/// only: no project config file is read.
pub fn locate(global: &GlobalArgs) -> anyhow::Result<(Project, PathBuf)> {
    let home = Config::load(None, &flags(global, None))?.config.home();
    Ok((Project::resolve(global.project.as_deref(), &home)?, home))
}

/// The project and configuration a command works on. Settings the project's config file may not
/// give are left out (`config.refused` lists them).
pub fn resolve(global: &GlobalArgs, token: Option<String>) -> anyhow::Result<(Project, Sourced)> {
    let flags = flags(global, token);
    // Resolve the project against the home the env/flags give, then load the project's config file.
    let pre = Config::load(None, &flags)?;
    let project = Project::resolve(global.project.as_deref(), &pre.config.home())?;
    let sourced = Config::load(Some(&project.root), &flags)?;
    let project = Project::at(project.root, &sourced.config.home());
    Ok((project, sourced))
}

/// Says on stderr, and in the log, which project settings were refused (the server runs without
/// them).
pub fn warn_refused(config: &Config) {
    for r in &config.refused {
        tracing::warn!(key = %r.key, file = %r.file.display(), reason = %r.reason, "project setting refused");
        if config.server.log_file.is_some() {
            eprintln!("refrain: {}", crate::term::field(&r.to_string()));
        }
    }
}

/// Starts tracing to stderr or the configured log file. Safe to call once per process.
pub fn init_logging(config: &Config) {
    use tracing_subscriber::{EnvFilter, fmt};
    let filter = EnvFilter::try_from_env("REFRAIN_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,sled=warn,hnsw_rs=warn,ort=warn"));
    let file = config
        .server
        .log_file
        .as_ref()
        .and_then(|p| std::fs::OpenOptions::new().create(true).append(true).open(p).ok());
    let builder = fmt().with_env_filter(filter).with_ansi(false);
    let _ = match file {
        Some(f) => builder.with_writer(std::sync::Mutex::new(f)).try_init(),
        None => builder.with_writer(std::io::stderr).try_init(),
    };
}

/// Provider rules for the prompt commands: the explicit file, else `prompt.rules_file`, else built in.
fn prompt_rules(global: &GlobalArgs, explicit: Option<&std::path::Path>) -> anyhow::Result<crate::prompt::Rules> {
    if let Some(p) = explicit {
        return Ok(crate::prompt::Rules::load(Some(p))?);
    }
    let (_, sourced) = resolve(global, None)?;
    Ok(crate::prompt::Rules::load(sourced.config.prompt.rules_file.as_deref())?)
}
