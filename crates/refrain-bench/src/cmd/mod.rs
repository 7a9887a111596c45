//! The scenarios of `refrain-bench`: rerunnable benchmarks that drive the real `refrain` binary
//! (over stdio, or the library in process to fill stores) and print tables.

mod all;
mod fault;
mod plans;
mod preload;
mod prompt;
mod results;
mod speed;
mod startup;
mod throughput;

use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Which benchmark to run.
#[derive(Debug, Subcommand)]
pub enum Scenario {
    /// Print the refrain library version this bench was built against.
    Version,
    /// Startup time, idle memory, embedding latency, index search latency.
    Core {
        /// Include the largest sizes (100k entries); slow.
        #[arg(long)]
        large: bool,
        /// Scratch directory (default: a fresh temp dir).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Spawn-to-initialize time over stdio and idle peak memory, with and without the model.
    Startup(startup::StartupArgs),
    /// The result cache: get/put speed over stdio (match quality: `results-eval`, `calibrate`).
    Results(results::ResultsBenchArgs),
    /// Prompt-cache analysis: explain_cache_break and compact_preview on large inputs.
    Prompt(prompt::BenchArgs),
    #[command(flatten)]
    Plans(plans::Scenario),
    /// The one table: every tool over stdio at 1k/10k(/100k) entries, throughput, memory, store size.
    All(all::AllArgs),
    /// Only the throughput rows of `all` (concurrent clients, exact gets and puts), with the CPU
    /// time per request of the owner, the followers and the clients.
    Throughput(throughput::ThroughputArgs),
    /// The in-process preload of `all` alone (plans and results, graphs built and saved), timed.
    Preload(preload::PreloadArgs),
    /// SIGKILL of the owner during bursts of writes, restart, every acknowledged write checked.
    Crash(fault::CrashArgs),
    /// Stdio and HTTP clients on one project at once, mixed reads and writes, the owner killed midway.
    Load(fault::LoadArgs),
    /// The latency of a cheap request while another client sends the slowest legal request.
    Stall(crate::stall::StallArgs),
    /// Time and peak memory of `refrain report` over a synthetic agent history of growing size.
    ReportHistory {
        /// History sizes in MiB, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "128,256,512,1024")]
        sizes_mb: Vec<u64>,
        /// Where to write the synthetic history (reused by later runs).
        #[arg(long, default_value = "target/bench-history")]
        dir: PathBuf,
    },
    /// The result cache's match quality over MCP on several datasets; writes evaluation records.
    ResultsEval(crate::results_eval::Args),
    /// Judge the plan cache on family data sets through the real binary over MCP.
    PlansEval(crate::plans_eval::Args),
    /// A stored question asked again word for word must get its own entry, at several store sizes.
    ResultsRepeat(crate::repeat::Args),
    /// Thresholds from evaluation records (writes calibration.json) and the per-dataset report,
    /// leave-one-dataset-out included.
    Calibrate(crate::calibrate::Args),
    /// What verification adds to a lookup by meaning on one core (embedding reported apart).
    VerifySpeed(crate::speed::Args),
    /// The team plan library on a PostgreSQL server: sync of N plans into an empty member,
    /// publish-to-served latency between two members.
    Team(crate::team::Args),
    /// Replay recorded sessions through refrain's hooks against a real `refrain serve`: per session,
    /// tokens removed, added, the tool list's fixed cost and the net, from refrain's own ledger.
    Replay(crate::replay::Args),
    /// Replay recorded sessions: reads refrain's read dedup would answer with a note, tokens saved.
    Dedup {
        /// Transcript files or directories (default: tests/fixtures/transcripts).
        paths: Vec<PathBuf>,
        /// Print the totals as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the benchmark and prints its table.
pub fn run(global: &GlobalArgs, scenario: Scenario) -> anyhow::Result<ExitCode> {
    match scenario {
        Scenario::Version => {
            writeln!(std::io::stdout().lock(), "refrain-bench {}", env!("CARGO_PKG_VERSION"))?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::Core { large, dir } => core(global, large, dir),
        Scenario::Startup(a) => startup::run(global, a),
        Scenario::Results(a) => results::run(global, &a),
        Scenario::Prompt(a) => prompt::run(a),
        Scenario::Plans(s) => plans::run(global, s),
        Scenario::All(a) => all::run(global, a),
        Scenario::Throughput(a) => throughput::run(global, a),
        Scenario::Preload(a) => preload::run(global, &a),
        Scenario::Crash(a) => fault::run_crash(global, a),
        Scenario::Load(a) => fault::run_load(global, a),
        Scenario::ReportHistory { sizes_mb, dir } => {
            let refrain = crate::driver::binary();
            crate::report_history::run(&crate::report_history::Args { sizes_mb, dir, refrain })?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::ResultsEval(a) => {
            tokio::runtime::Runtime::new()?.block_on(crate::results_eval::run(&a))?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::ResultsRepeat(a) => {
            tokio::runtime::Runtime::new()?.block_on(crate::repeat::run(&a))?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::PlansEval(a) => {
            tokio::runtime::Runtime::new()?.block_on(crate::plans_eval::run(a))?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::Calibrate(a) => {
            crate::calibrate::run(&a)?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::VerifySpeed(a) => {
            crate::speed::run(&a)?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::Replay(a) => {
            crate::replay::run(config(global)?, models(global)?, &a)?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::Dedup { paths, json } => {
            crate::dedup::run(&paths, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::Team(a) => {
            tokio::runtime::Runtime::new()?.block_on(crate::team::run(&a))?;
            Ok(ExitCode::SUCCESS)
        }
        Scenario::Stall(a) => {
            tokio::runtime::Runtime::new()?.block_on(crate::stall::run(a))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn core(global: &GlobalArgs, large: bool, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let models = models(global)?;
    let scratch = match &dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(crate::core::run(&scratch, &models, large));
    if dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "machine: {}", crate::measure::machine())?;
    writeln!(out, "{}", report?)?;
    Ok(ExitCode::SUCCESS)
}

/// Flags every scenario takes.
#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// The `refrain` binary to drive (default: `$REFRAIN_BIN`, else the `refrain` beside this
    /// binary, else `refrain` on the PATH).
    #[arg(long, global = true)]
    pub refrain: Option<PathBuf>,
    /// refrain's data home, for finding the provisioned model (default: refrain's own default).
    #[arg(long, global = true)]
    pub home: Option<PathBuf>,
    /// Directory holding the embedding model and ONNX runtime.
    #[arg(long, global = true, env = "REFRAIN_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
}

/// refrain's resolved configuration (defaults < user config < env < these flags), as the real
/// binary would see it outside any project.
pub fn config(global: &GlobalArgs) -> anyhow::Result<refrain::config::Config> {
    let flags = refrain::config::Overrides {
        home: global.home.clone(),
        model_dir: global.model_dir.clone(),
        ..Default::default()
    };
    Ok(refrain::config::Config::load(None, &flags)?.config)
}

/// The model directory the real binary would use.
pub fn models(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let config = config(global)?;
    Ok(config.model.dir.clone().unwrap_or_else(|| config.home().join("models")))
}
