//! `refrain-bench report-history`: how long `refrain report` takes over a large agent history,
//! and its peak memory, at growing sizes (the report must stream: time grows with the bytes,
//! memory stays flat). Writes a synthetic history once (the largest size), links subsets of it
//! for the smaller sizes, runs the real binary on each and prints a Markdown table.

use crate::history::{claude_session, codex_rollout};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes per synthetic session file.
const FILE_BYTES: u64 = 4 << 20;

/// Options of the run.
pub struct Args {
    /// History sizes to measure, in MiB.
    pub sizes_mb: Vec<u64>,
    /// Where to write the history (reused when already there).
    pub dir: PathBuf,
    /// The `refrain` binary.
    pub refrain: PathBuf,
}

/// Runs the benchmark and prints the table.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let largest = args.sizes_mb.iter().copied().max().context("give at least one size")?;
    let all = args.dir.join("all");
    let files = generate(&all, largest << 20)?;
    eprintln!("history: {} files, {} MiB in {}", files.len(), largest, all.display());
    let mut out = std::io::stdout().lock();
    writeln!(out, "| history | files | wall time | CPU time | throughput (wall) | peak RSS |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for &mb in &args.sizes_mb {
        let root = args.dir.join(format!("size-{mb}"));
        let n = ((mb << 20) / FILE_BYTES).max(1) as usize;
        link_subset(&files, &root, n)?;
        let (secs, cpu, rss) = measure(&args.refrain, &root)?;
        let mb_read = (n as u64 * FILE_BYTES) as f64 / 1_048_576.0;
        writeln!(
            out,
            "| {mb} MiB | {n} | {secs:.1} s | {cpu:.1} s | {:.0} MiB/s | {:.0} MiB |",
            mb_read / secs,
            rss as f64 / 1024.0
        )?;
        out.flush()?;
    }
    Ok(())
}

/// The synthetic files (half Claude Code sessions, half Codex rollouts), written once.
fn generate(dir: &Path, bytes: u64) -> anyhow::Result<Vec<(PathBuf, &'static str)>> {
    let count = bytes.div_ceil(FILE_BYTES);
    let mut out = Vec::new();
    std::fs::create_dir_all(dir)?;
    let start = 1_767_225_600_000i64; // 2026-01-01
    for i in 0..count {
        let (name, kind) =
            if i % 2 == 0 { (format!("session-{i}.jsonl"), "claude") } else { (format!("rollout-{i}.jsonl"), "codex") };
        let path = dir.join(&name);
        let ok = std::fs::metadata(&path).is_ok_and(|m| m.len() >= FILE_BYTES);
        if !ok {
            let t = start + i as i64 * 3_600_000 * 6;
            if kind == "claude" {
                claude_session(&path, i + 1, FILE_BYTES, t)?
            } else {
                codex_rollout(&path, i + 1, FILE_BYTES, t)?
            }
        }
        out.push((path, kind));
    }
    Ok(out)
}

/// A history root holding the first `n` files, as hard links.
fn link_subset(files: &[(PathBuf, &str)], root: &Path, n: usize) -> anyhow::Result<()> {
    let _ = std::fs::remove_dir_all(root);
    let claude = root.join("claude/projects/-home-dev-project");
    let codex = root.join("codex/sessions/2026/01/01");
    std::fs::create_dir_all(&claude)?;
    std::fs::create_dir_all(&codex)?;
    for (path, kind) in files.iter().take(n) {
        let name = path.file_name().context("file name")?;
        let to = if *kind == "claude" { claude.join(name) } else { codex.join(name) };
        std::fs::hard_link(path, &to).or_else(|_| std::fs::copy(path, &to).map(|_| ()))?;
    }
    Ok(())
}

/// Runs `refrain report --json --no-stores` over the root: wall time, CPU time (user + system,
/// from /proc/<pid>/stat, robust to other load on the machine) and peak RSS (KiB, VmHWM from
/// /proc/<pid>/status), sampled until the process exits.
fn measure(refrain: &Path, root: &Path) -> anyhow::Result<(f64, f64, u64)> {
    let started = Instant::now();
    let mut child = std::process::Command::new(refrain)
        .args(["report", "--json", "--no-stores", "--claude-dir"])
        .arg(root.join("claude"))
        .arg("--codex-home")
        .arg(root.join("codex"))
        .arg("--home")
        .arg(root.join("home"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run {}", refrain.display()))?;
    let status_path = format!("/proc/{}/status", child.id());
    let stat_path = format!("/proc/{}/stat", child.id());
    let mut peak = 0u64;
    let mut ticks = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&stat_path)
            && let Some(rest) = text.rsplit_once(')').map(|(_, r)| r)
        {
            // Fields after the command name: state is the 1st, utime the 12th, stime the 13th.
            let f: Vec<&str> = rest.split_whitespace().collect();
            if let (Some(u), Some(s)) =
                (f.get(11).and_then(|x| x.parse::<u64>().ok()), f.get(12).and_then(|x| x.parse::<u64>().ok()))
            {
                ticks = ticks.max(u + s);
            }
        }
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb);
        }
        if let Some(s) = child.try_wait()? {
            break s;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        bail!("refrain report failed over {}", root.display());
    }
    // Clock ticks are 100 per second on Linux (USER_HZ).
    Ok((started.elapsed().as_secs_f64(), ticks as f64 / 100.0, peak))
}
