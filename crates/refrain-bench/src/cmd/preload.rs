//! `refrain-bench preload`: the in-process preload of `bench all` alone (plans and results, both
//! graphs built and saved), timed, so its cost can be measured at sizes where the rest of the
//! table would take far longer than the fill.

use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Flags of `refrain-bench preload`.
#[derive(Debug, Args)]
pub struct PreloadArgs {
    /// Entries (plans and results each).
    #[arg(long, default_value_t = 10_000)]
    size: usize,
    /// Scratch directory (default: a fresh temp dir, removed afterwards).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Fills one store and prints wall and CPU time.
pub fn run(global: &super::GlobalArgs, args: &PreloadArgs) -> anyhow::Result<ExitCode> {
    let models = super::models(global)?;
    let scratch = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-preload-{}", std::process::id())),
    };
    let setup = crate::driver::scratch(&scratch, &format!("size-{}", args.size), &models)?;
    let project = refrain::project::Project::at(setup.project.clone(), &setup.home);
    let (t, cpu) = (Instant::now(), crate::all::process_cpu_s());
    let filled = crate::preload::fill(&project, &models, args.size, 200, 200, false);
    let (wall, cpu) = (t.elapsed().as_secs_f64(), crate::all::process_cpu_s() - cpu);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    filled?;
    writeln!(
        std::io::stdout().lock(),
        "preload of {} plans + {} results: wall {wall:.1} s, CPU {cpu:.1} s, peak RSS {:.0} MiB, load {}",
        args.size,
        args.size,
        crate::measure::peak_rss_mib(std::process::id()).unwrap_or(f64::NAN),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" / ")
    )?;
    Ok(ExitCode::SUCCESS)
}
