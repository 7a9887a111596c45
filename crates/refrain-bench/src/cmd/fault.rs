//! `refrain-bench crash` and `refrain-bench load`: faults and concurrency against the real binary.
//! Both exit non-zero when an acknowledged write was lost or torn or a request failed where it
//! should not, so CI can run a few rounds of them.

use super::GlobalArgs;
use crate::{crash, load};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Flags of `refrain-bench crash`.
#[derive(Debug, Args)]
pub struct CrashArgs {
    /// Rounds (each: fresh project, writes, SIGKILL of the owner, restart, check).
    #[arg(long, default_value_t = 100)]
    rounds: usize,
    /// Server processes per round; the first owns the store.
    #[arg(long, default_value_t = 3)]
    processes: usize,
    /// Acknowledged writes attempted per process per round.
    #[arg(long, default_value_t = 40)]
    writes: usize,
    /// Seed of the kill moments (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Run without the embedding model (no semantic writes or index check).
    #[arg(long)]
    no_model: bool,
    /// Scratch directory (default: a fresh temp dir, removed afterwards).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Flags of `refrain-bench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// `refrain serve` processes over stdio, one client each; the first owns the store and is killed midway.
    #[arg(long, default_value_t = 4)]
    stdio: usize,
    /// Clients of one `refrain serve --http` process on the same project.
    #[arg(long, default_value_t = 4)]
    http: usize,
    /// Requests per client (half writes, half reads of the client's own acknowledged writes).
    #[arg(long, default_value_t = 200)]
    requests: usize,
    /// Do not kill the owner midway.
    #[arg(long)]
    no_kill: bool,
    /// Run without the embedding model.
    #[arg(long)]
    no_model: bool,
    /// Scratch directory (default: a fresh temp dir, removed afterwards).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Where the model is and where scratch data goes.
fn paths(global: &GlobalArgs, no_model: bool, dir: &Option<PathBuf>, name: &str) -> anyhow::Result<(PathBuf, PathBuf)> {
    let config = super::config(global)?;
    let scratch = match dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-{name}-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)?;
    let models = if no_model {
        scratch.join("no-model")
    } else {
        config.model.dir.clone().unwrap_or_else(|| config.home().join("models"))
    };
    Ok((models, scratch))
}

/// Runs the crash rounds and prints the tally.
pub fn run_crash(global: &GlobalArgs, args: CrashArgs) -> anyhow::Result<ExitCode> {
    let (models, scratch) = paths(global, args.no_model, &args.dir, "crash")?;
    let plan = crash::Plan {
        rounds: args.rounds,
        processes: args.processes.max(2),
        writes: args.writes,
        seed: args.seed.unwrap_or_else(crate::work::Rng::clock_seed),
        semantic: !args.no_model,
    };
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let tally = runtime.block_on(crash::run(&scratch, &models, &plan, |t| {
        if t.rounds % 10 == 0 {
            eprintln!(
                "round {}: {} acknowledged, {} lost, {} torn, {} errors",
                t.rounds, t.acked, t.lost, t.torn, t.errors
            );
        }
    }));
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let tally = tally?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "machine: {}", crate::measure::machine())?;
    write!(out, "{}", tally.report(&plan, started.elapsed()))?;
    Ok(if tally.clean() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Runs the load scenario and prints its figures.
pub fn run_load(global: &GlobalArgs, args: LoadArgs) -> anyhow::Result<ExitCode> {
    let (models, scratch) = paths(global, args.no_model, &args.dir, "load")?;
    let shape = load::Shape { stdio: args.stdio.max(1), http: args.http, requests: args.requests, kill: !args.no_kill };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(load::run(&scratch, &models, &shape));
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let report = report?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "machine: {}", crate::measure::machine())?;
    write!(out, "{}", report.text())?;
    Ok(if report.clean() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
