//! `refrain-bench`: evaluation runners and benchmarks that drive refrain (the real binary over
//! stdio, or the library in process). Kept out of the shipped `refrain` binary, which is only the
//! product.

mod calibrate;
mod dedup;
mod history;
mod mcp;
mod plans_eval;
mod record;
mod repeat;
mod report_history;
mod results_eval;
mod sets;
mod speed;
mod stall;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
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
    /// Time and peak memory of `refrain report` over a synthetic agent history of growing size.
    ReportHistory {
        /// History sizes in MiB, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "128,256,512,1024")]
        sizes_mb: Vec<u64>,
        /// Where to write the synthetic history (reused by later runs).
        #[arg(long, default_value = "target/bench-history")]
        dir: PathBuf,
        /// The refrain binary to measure (default: the one built beside this bench).
        #[arg(long)]
        refrain: Option<PathBuf>,
    },
    /// The result cache's match quality over MCP on several datasets; writes evaluation records.
    ResultsEval(results_eval::Args),
    /// Judge the plan cache on family data sets through the real binary over MCP.
    PlansEval(plans_eval::Args),
    /// A stored question asked again word for word must get its own entry, at several store sizes.
    ResultsRepeat(repeat::Args),
    /// Thresholds from evaluation records (writes calibration.json) and the per-dataset report,
    /// leave-one-dataset-out included.
    Calibrate(calibrate::Args),
    /// What verification adds to a lookup by meaning on one core (embedding reported apart).
    VerifySpeed(speed::Args),
    /// Replay recorded sessions: reads refrain's read dedup would answer with a note, tokens saved.
    Dedup {
        /// Transcript files or directories (default: tests/fixtures/transcripts).
        paths: Vec<PathBuf>,
        /// Print the totals as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The latency of a cheap request while another client sends the slowest legal request.
    Stall(stall::StallArgs),
}

fn main() -> anyhow::Result<ExitCode> {
    match Cli::parse().command {
        Command::Version => {
            eprintln!("refrain-bench {}", env!("CARGO_PKG_VERSION"));
        }
        Command::ReportHistory { sizes_mb, dir, refrain } => {
            let refrain = match refrain {
                Some(r) => r,
                None => std::env::current_exe()?.with_file_name("refrain"),
            };
            report_history::run(&report_history::Args { sizes_mb, dir, refrain })?;
        }
        Command::ResultsEval(a) => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(results_eval::run(&a))?;
        }
        Command::ResultsRepeat(a) => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(repeat::run(&a))?;
        }
        Command::PlansEval(a) => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(plans_eval::run(a))?;
        }
        Command::Calibrate(a) => calibrate::run(&a)?,
        Command::VerifySpeed(a) => speed::run(&a)?,
        Command::Dedup { paths, json } => {
            dedup::run(&paths, json)?;
        }
        Command::Stall(args) => {
            tokio::runtime::Runtime::new()?.block_on(stall::run(args))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
