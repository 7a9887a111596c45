//! `refrain-bench all`: the one table (every tool over stdio at several store sizes, throughput,
//! memory, store size), with the machine it ran on. The prompt tools' large inputs come from the
//! `bench prompt` generators.

use super::GlobalArgs;
use crate::all::{Opts, PromptInputs};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `refrain-bench all`.
#[derive(Debug, Args)]
pub struct AllArgs {
    /// Store sizes (plans and results each).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    sizes: Vec<usize>,
    /// Add 100k entries to the sizes (the preload builds two 100k-vector graphs; minutes).
    #[arg(long)]
    large: bool,
    /// Timed calls per measure.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// Concurrency levels for the throughput rows.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16")]
    clients: Vec<usize>,
    /// Scratch directory (default: a fresh temp dir, removed afterwards).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep each size's store under the scratch directory (needs --dir); a size kept there by an
    /// earlier --keep run is reused, not preloaded again (the table says so).
    #[arg(long, requires = "dir")]
    keep: bool,
    /// Create the stores without compression, as refrain did before (to compare sizes on disk).
    #[arg(long)]
    plain_store: bool,
}

/// Runs the table and prints it.
pub fn run(global: &GlobalArgs, args: AllArgs) -> anyhow::Result<ExitCode> {
    let config = super::config(global)?;
    let models = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
    let scratch = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-all-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)?;
    let mut sizes = args.sizes.clone();
    if args.large && !sizes.contains(&100_000) {
        sizes.push(100_000);
    }
    let (before, after) = super::prompt::requests(150_000)?;
    let tokens = refrain::prompt::Request::parse(&before, None)?.tokens();
    let prompt = PromptInputs { before, after, tokens, transcript: super::prompt::transcript(10_000_000) };
    let opts =
        Opts { sizes, samples: args.samples, models, clients: args.clients, keep: args.keep, plain: args.plain_store };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(crate::all::run(&scratch, &opts, &prompt));
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let report = report?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "machine: {}\n", crate::measure::machine())?;
    write!(out, "{report}")?;
    Ok(ExitCode::SUCCESS)
}
