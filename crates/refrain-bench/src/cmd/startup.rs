//! `refrain-bench startup`: how fast the refrain binary answers `initialize` over stdio after being
//! spawned, and its idle peak memory (VmHWM), with the embedding model and without one.
//!
//! Each setting spawns `refrain serve` (through `bench::driver`, as every benchmark does) on its
//! own temporary project and home, removed afterwards. Run it on a release build.

use super::GlobalArgs;
use crate::{core, driver};
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `refrain-bench startup`.
#[derive(Debug, Args)]
pub struct StartupArgs {
    /// Spawns per setting (with the model, without).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// One setting's figures.
#[derive(Debug)]
struct Figures {
    label: &'static str,
    model_dir: PathBuf,
    spawn_to_initialize_ms: Vec<f64>,
    model_state: String,
    idle_peak_rss_kib: u64,
}

/// Measures and prints the figures.
pub fn run(global: &GlobalArgs, args: StartupArgs) -> anyhow::Result<ExitCode> {
    let config = super::config(global)?;
    let real = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
    let scratch = std::env::temp_dir().join(format!("refrain-bench-startup-{}", std::process::id()));
    let empty = scratch.join("no-model");
    std::fs::create_dir_all(&empty)?;
    let result = (|| -> anyhow::Result<Vec<Figures>> {
        Ok(vec![
            measure("with model", &real, &scratch, args.runs)?,
            measure("without model", &empty, &scratch, args.runs)?,
        ])
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    report(&result?, args.json)?;
    Ok(ExitCode::SUCCESS)
}

fn measure(label: &'static str, model_dir: &Path, scratch: &Path, runs: usize) -> anyhow::Result<Figures> {
    let setup = driver::scratch(scratch, label, model_dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (samples, (model_state, mib)) = runtime.block_on(async {
        anyhow::Ok((core::startup(&setup, runs.max(1)).await?, core::idle_memory(&setup).await?))
    })?;
    let spawn_to_initialize_ms =
        (0..samples.len()).map(|i| samples.quantile_ms(i as f64 / (samples.len().max(2) - 1) as f64)).collect();
    Ok(Figures {
        label,
        model_dir: model_dir.to_path_buf(),
        spawn_to_initialize_ms,
        model_state,
        idle_peak_rss_kib: (mib * 1024.0) as u64,
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn report(figures: &[Figures], as_json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let mut rows = Vec::new();
    for f in figures {
        let mut t = f.spawn_to_initialize_ms.clone();
        t.sort_by(f64::total_cmp);
        let (min, p50, p90, max) =
            (percentile(&t, 0.0), percentile(&t, 50.0), percentile(&t, 90.0), percentile(&t, 100.0));
        rows.push(json!({"setting": f.label, "model_dir": f.model_dir, "runs": t.len(), "model_state": f.model_state,
            "spawn_to_initialize_ms": {"min": min, "p50": p50, "p90": p90, "max": max}, "idle_peak_rss_kib": f.idle_peak_rss_kib}));
        if !as_json {
            writeln!(
                out,
                "{:14} spawn->initialize ms: min {min:.1}  p50 {p50:.1}  p90 {p90:.1}  max {max:.1}  ({} runs)",
                f.label,
                t.len()
            )?;
            writeln!(
                out,
                "{:14} idle peak RSS: {:.1} MiB (model {})",
                "",
                f.idle_peak_rss_kib as f64 / 1024.0,
                f.model_state
            )?;
        }
    }
    if as_json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_ranks() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 50.0), 3.0);
        assert_eq!(percentile(&v, 100.0), 5.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
