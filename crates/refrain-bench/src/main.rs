//! `refrain-bench`: evaluation runners and benchmarks that drive refrain (the real binary over
//! stdio, or the library in process). Kept out of the shipped `refrain` binary, which is only the
//! product.

mod stall;

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
    /// The latency of a cheap request while another client sends the slowest legal request.
    Stall(stall::StallArgs),
}

fn main() -> anyhow::Result<ExitCode> {
    match Cli::parse().command {
        Command::Version => {
            eprintln!("refrain-bench {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
        Command::Stall(args) => {
            tokio::runtime::Runtime::new()?.block_on(stall::run(args))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
