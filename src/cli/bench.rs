//! `refrain bench <scenario>`: rerunnable benchmarks that print a Markdown table.

use super::GlobalArgs;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Which benchmark to run.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Scenario {
    /// Startup time, idle memory, embedding latency, index search latency.
    Core,
}

/// Arguments of `refrain bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The scenario.
    scenario: Scenario,
    /// Include the largest sizes (100k entries); slow.
    #[arg(long)]
    large: bool,
    /// Scratch directory (default: a fresh temp dir).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Runs the benchmark and prints its table.
pub fn run(global: &GlobalArgs, args: BenchArgs) -> anyhow::Result<ExitCode> {
    let (_, sourced) = super::resolve(global, None)?;
    let config = sourced.config;
    let models = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
    let scratch = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(async {
        match args.scenario {
            Scenario::Core => crate::bench::core::run(&scratch, &models, args.large).await,
        }
    });
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "machine: {}", crate::bench::machine())?;
    writeln!(out, "{}", report?)?;
    Ok(ExitCode::SUCCESS)
}
