//! `refrain-bench results`: the result cache's speed over stdio against the real binary. Run it
//! from a release build. Match quality is measured by `refrain-bench results-eval` (the real
//! binary over MCP on several datasets) and `refrain-bench calibrate`.

use super::GlobalArgs;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `refrain-bench results`.
#[derive(Debug, Args)]
pub struct ResultsBenchArgs {
    /// GPTCache's mock_data.json (origin/similar pairs, MIT; zilliztech/GPTCache examples/benchmark), read at run time.
    #[arg(long)]
    pub data: PathBuf,
    /// Skip the speed part.
    #[arg(long)]
    pub no_speed: bool,
    /// Store sizes for the speed part.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    pub sizes: Vec<usize>,
    /// Entries per size that carry an embedding (the rest are exact-only, to keep setup short).
    #[arg(long, default_value_t = 1000)]
    pub semantic_entries: usize,
    /// Timed calls per measurement.
    #[arg(long, default_value_t = 300)]
    pub samples: usize,
}

/// Runs the speed part.
pub fn run(global: &GlobalArgs, args: &ResultsBenchArgs) -> anyhow::Result<ExitCode> {
    if !args.no_speed {
        let opts = super::speed::Opts {
            data: args.data.clone(),
            sizes: args.sizes.clone(),
            semantic_entries: args.semantic_entries,
            samples: args.samples,
        };
        super::speed::run(global, &opts)?;
    }
    Ok(ExitCode::SUCCESS)
}
