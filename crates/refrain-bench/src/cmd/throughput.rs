//! `refrain-bench throughput`: only the throughput rows of `all`, for iterating on the request
//! path. The store is preloaded once per size and kept under `--dir` for the next run.

use super::GlobalArgs;
use crate::driver;
use crate::preload;
use clap::Args;
use refrain::project::Project;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `refrain-bench throughput`.
#[derive(Debug, Args)]
pub struct ThroughputArgs {
    /// Store sizes (plans and results each).
    #[arg(long, value_delimiter = ',', default_value = "10000")]
    sizes: Vec<usize>,
    /// Concurrency levels.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16")]
    clients: Vec<usize>,
    /// Calls per client per level.
    #[arg(long, default_value_t = 500)]
    per: usize,
    /// Runs per level (each line printed).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Scratch directory; a size preloaded there by an earlier run is reused (default: a fresh
    /// temp dir, removed afterwards).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Runs the levels and prints one line per run.
pub fn run(global: &GlobalArgs, args: ThroughputArgs) -> anyhow::Result<ExitCode> {
    let models = super::models(global)?;
    let scratch = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-throughput-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let out = runtime.block_on(async {
        let mut out = std::io::stdout().lock();
        writeln!(out, "machine: {}", crate::measure::machine())?;
        for &n in &args.sizes {
            let setup = driver::scratch(&scratch, &format!("size-{n}"), &models)?;
            let marker = setup.home.join(preload::PRELOADED);
            if !marker.exists() {
                let project = Project::at(setup.project.clone(), &setup.home);
                preload::fill(&project, &models, n, 200, 200, false)?;
                std::fs::write(&marker, b"")?;
            }
            let owner = driver::spawn(&setup).await?;
            owner.wait_model().await?;
            for &c in &args.clients {
                for _ in 0..args.repeat {
                    let rate = crate::throughput::run(&setup, &owner, c, args.per, n).await?;
                    writeln!(out, "| {n} entries | {c} client(s) | {} | load {} |", rate.cell(), rate.load)?;
                }
            }
        }
        Ok::<_, anyhow::Error>(())
    });
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    out?;
    Ok(ExitCode::SUCCESS)
}
