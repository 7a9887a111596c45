//! `refrain-bench`: evaluation runners and benchmarks that drive refrain (the real binary over
//! stdio, or the library in process to fill stores). Kept out of the shipped `refrain` binary,
//! which is only the product.

mod all;
mod asked;
mod calibrate;
mod cmd;
mod core;
mod crash;
mod dedup;
mod driver;
mod families;
mod history;
mod load;
mod mcp;
mod measure;
mod plans_eval;
mod preload;
mod record;
mod repeat;
mod replay;
mod report_history;
mod results_eval;
mod sets;
mod speed;
mod stall;
mod team;
mod throughput;
mod trees;
mod work;

use clap::Parser;
use std::process::ExitCode;

/// Benchmarks and evaluation runners for refrain.
#[derive(Debug, Parser)]
#[command(name = "refrain-bench", version, about)]
struct Cli {
    #[command(flatten)]
    global: cmd::GlobalArgs,
    #[command(subcommand)]
    command: cmd::Scenario,
}

fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    if let Some(bin) = &cli.global.refrain {
        driver::use_binary(bin.clone());
    }
    cmd::run(&cli.global, cli.command)
}
