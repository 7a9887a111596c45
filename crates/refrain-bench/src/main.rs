//! `refrain-bench`: evaluation runners and benchmarks that drive refrain (the real binary over
//! stdio, or the library in process). Kept out of the shipped `refrain` binary, which is only the
//! product.

mod mcp;
mod plans_eval;

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
    /// Judge the plan cache on family data sets through the real binary over MCP.
    PlansEval(plans_eval::Args),
}

fn main() -> anyhow::Result<ExitCode> {
    match Cli::parse().command {
        Command::Version => {
            eprintln!("refrain-bench {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
        Command::PlansEval(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            rt.block_on(plans_eval::run(args))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
