//! `refrain bench startup`: how fast this binary answers `initialize` over stdio after being
//! spawned, and its idle peak memory (VmHWM), with the embedding model and without one.
//!
//! Every run spawns `refrain serve` on a fresh temporary project and home, so runs share nothing;
//! the temporary directories are removed afterwards. Run it on a release build.

use super::GlobalArgs;
use clap::Args;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Arguments of `refrain bench startup`.
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
    let (_, sourced) = super::resolve(global, None)?;
    let config = sourced.config;
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
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for i in 0..runs.max(1) {
        let mut server = Spawned::start(model_dir, &scratch.join(format!("{label}-{i}")))?;
        times.push(server.initialize()?);
        if i + 1 == runs.max(1) {
            last = Some(server.idle_peak()?);
        }
        server.stop();
    }
    let (model_state, idle_peak_rss_kib) = last.unwrap_or_default();
    Ok(Figures {
        label,
        model_dir: model_dir.to_path_buf(),
        spawn_to_initialize_ms: times,
        model_state,
        idle_peak_rss_kib,
    })
}

/// A `refrain serve` child on stdio.
struct Spawned {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    started: Instant,
}

impl Spawned {
    fn start(model_dir: &Path, dir: &Path) -> anyhow::Result<Spawned> {
        let (project, home) = (dir.join("project"), dir.join("home"));
        std::fs::create_dir_all(&project)?;
        std::fs::create_dir_all(&home)?;
        let started = Instant::now();
        let mut child = Command::new(std::env::current_exe()?)
            .arg("--project")
            .arg(&project)
            .arg("--home")
            .arg(&home)
            .arg("--model-dir")
            .arg(model_dir)
            .arg("serve")
            .env("REFRAIN_LOG", "warn")
            .env_remove("REFRAIN_PROJECT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let input = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin on the child"))?;
        let output = BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout on the child"))?);
        Ok(Spawned { child, input, output, started })
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        writeln!(self.input, "{message}")?;
        Ok(self.input.flush()?)
    }

    fn receive(&mut self) -> anyhow::Result<Value> {
        let mut line = String::new();
        if self.output.read_line(&mut line)? == 0 {
            anyhow::bail!("the server closed stdout");
        }
        Ok(serde_json::from_str(&line)?)
    }

    /// Milliseconds from spawn to the `initialize` answer.
    fn initialize(&mut self) -> anyhow::Result<f64> {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "refrain-bench", "version": "0"}});
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))?;
        let answer = self.receive()?;
        let elapsed = self.started.elapsed().as_secs_f64() * 1000.0;
        if answer.get("result").is_none() {
            anyhow::bail!("initialize failed: {answer}");
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(elapsed)
    }

    /// Waits until the model is loaded or unavailable, idles, and reads the peak resident size.
    fn idle_peak(&mut self) -> anyhow::Result<(String, u64)> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut state = String::from("loading");
        for id in 2.. {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "cache_stats", "arguments": {}}});
            self.send(&call)?;
            let answer = self.receive()?;
            state = answer["result"]["structuredContent"]["model"]["state"].as_str().unwrap_or("unknown").to_string();
            if state != "loading" || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        Ok((state, hwm))
    }

    fn stop(mut self) {
        drop(self.input);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
