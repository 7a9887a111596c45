//! `refrain bench <scenario>`: rerunnable benchmarks that drive the real binary and print tables.

use super::GlobalArgs;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `refrain bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    scenario: Scenario,
}

/// Which benchmark to run.
#[derive(Debug, Subcommand)]
enum Scenario {
    /// Startup time, idle memory, embedding latency, index search latency.
    Core {
        /// Include the largest sizes (100k entries); slow.
        #[arg(long)]
        large: bool,
        /// Scratch directory (default: a fresh temp dir).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Spawn-to-initialize time over stdio and idle peak memory, with and without the model.
    Startup(super::bench_startup::StartupArgs),
    /// The result cache: semantic match quality on GPTCache's pairs and get/put speed over stdio.
    Results(super::bench_results::ResultsBenchArgs),
    /// Prompt-cache analysis: explain_cache_break and compact_preview on large inputs.
    Prompt(super::bench_prompt::BenchArgs),
    #[command(flatten)]
    Plans(super::bench_plans::Scenario),
    /// The one table: every tool over stdio at 1k/10k(/100k) entries, throughput, memory, store size.
    All(super::bench_all::AllArgs),
    /// SIGKILL of the owner during bursts of writes, restart, every acknowledged write checked.
    Crash(super::bench_fault::CrashArgs),
    /// Stdio and HTTP clients on one project at once, mixed reads and writes, the owner killed midway.
    Load(super::bench_fault::LoadArgs),
}

/// Runs the benchmark and prints its table.
pub fn run(global: &GlobalArgs, args: BenchArgs) -> anyhow::Result<ExitCode> {
    match args.scenario {
        Scenario::Core { large, dir } => core(global, large, dir),
        Scenario::Startup(a) => super::bench_startup::run(global, a),
        Scenario::Results(a) => super::bench_results::run(global, &a),
        Scenario::Prompt(a) => super::bench_prompt::run(a),
        Scenario::Plans(s) => super::bench_plans::run(global, s),
        Scenario::All(a) => super::bench_all::run(global, a),
        Scenario::Crash(a) => super::bench_fault::run_crash(global, a),
        Scenario::Load(a) => super::bench_fault::run_load(global, a),
    }
}

fn core(global: &GlobalArgs, large: bool, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let (_, sourced) = super::resolve(global, None)?;
    let config = sourced.config;
    let models = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
    let scratch = match &dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(crate::bench::core::run(&scratch, &models, large));
    if dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "machine: {}", crate::bench::machine())?;
    writeln!(out, "{}", report?)?;
    Ok(ExitCode::SUCCESS)
}
