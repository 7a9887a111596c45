//! `refrain-bench`: evaluation runners and benchmarks that drive refrain (the real binary over
//! stdio, or the library in process). Kept out of the shipped `refrain` binary, which is only the
//! product.

mod calibrate;
mod mcp;
mod plans_eval;
mod record;
mod results_eval;
mod sets;
mod speed;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Benchmarks and evaluation runners for refrain.
#[derive(Debug, Parser)]
#[command(name = "refrain-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the refrain library version this bench was built against.
    Version,
    /// The result cache's match quality over MCP on several datasets; writes evaluation records.
    ResultsEval(results_eval::Args),
    /// Judge the plan cache on family data sets through the real binary over MCP.
    PlansEval(plans_eval::Args),
    /// Thresholds from evaluation records (writes calibration.json) and the per-dataset report,
    /// leave-one-dataset-out included.
    Calibrate(calibrate::Args),
    /// What verification adds to a lookup by meaning on one core (embedding reported apart).
    VerifySpeed(speed::Args),
}

fn main() -> anyhow::Result<ExitCode> {
    match Cli::parse().command {
        Command::Version => {
            eprintln!("refrain-bench {}", env!("CARGO_PKG_VERSION"));
        }
        Command::ResultsEval(a) => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(results_eval::run(&a))?;
        }
        Command::PlansEval(a) => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(plans_eval::run(a))?;
        }
        Command::Calibrate(a) => calibrate::run(&a)?,
        Command::VerifySpeed(a) => speed::run(&a)?,
    }
    Ok(ExitCode::SUCCESS)
}
