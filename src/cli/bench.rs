//! `refrain bench <scenario>`: rerunnable benchmarks, run in release mode.
//!
//! `results` measures the result cache: match quality on the GPTCache paraphrase pairs (in
//! process, through the same decision code `response_cache_get` uses) and speed over stdio
//! against the real binary.

use super::GlobalArgs;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `refrain bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Debug, Subcommand)]
enum Scenario {
    /// The result cache: semantic match quality and get/put speed.
    Results(ResultsBenchArgs),
}

/// Arguments of `refrain bench results`.
#[derive(Debug, Args)]
pub struct ResultsBenchArgs {
    /// GPTCache's mock_data.json (origin/similar pairs, MIT), read at run time.
    #[arg(long, default_value = "../shared/data/gptcache/mock_data.json")]
    pub data: PathBuf,
    /// Skip the quality part.
    #[arg(long)]
    pub no_quality: bool,
    /// Skip the speed part.
    #[arg(long)]
    pub no_speed: bool,
    /// Store sizes for the speed part.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    pub sizes: Vec<usize>,
    /// Entries per size that carry an embedding (the rest are exact-only, to keep setup short).
    #[arg(long, default_value_t = 2000)]
    pub semantic_entries: usize,
    /// Timed calls per measurement.
    #[arg(long, default_value_t = 300)]
    pub samples: usize,
    /// Write every paraphrase's nearest candidates as JSON here (for tuning the verifier).
    #[arg(long)]
    pub dump: Option<PathBuf>,
}

/// Runs a benchmark scenario and prints its tables.
pub fn run(global: &GlobalArgs, args: BenchArgs) -> anyhow::Result<ExitCode> {
    match args.scenario {
        Scenario::Results(a) => {
            if !a.no_quality {
                super::bench_quality::run(global, &a)?;
            }
            if !a.no_speed {
                super::bench_speed::run(global, &a)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
