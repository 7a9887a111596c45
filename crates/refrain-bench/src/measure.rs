//! Shared measuring helpers of the benchmarks: latency samples with percentiles, Markdown tables,
//! the machine description and peak memory. Benchmarks may be slow; tests may not.

use std::time::Duration;

/// Latency samples with percentiles.
#[derive(Debug, Default, Clone)]
pub struct Samples(Vec<Duration>);

impl Samples {
    /// Records one sample.
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    /// The q-th quantile (0..=1) in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        let mut v = self.0.clone();
        v.sort();
        let i = ((v.len() - 1) as f64 * q).round() as usize;
        v[i.min(v.len() - 1)].as_secs_f64() * 1000.0
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `p50 / p99 / max` in ms, formatted.
    pub fn summary(&self) -> String {
        format!("{:.3} / {:.3} / {:.3}", self.quantile_ms(0.5), self.quantile_ms(0.99), self.quantile_ms(1.0))
    }
}

/// One row of a benchmark table.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured.
    pub what: String,
    /// The figure.
    pub value: String,
    /// The target it is held against, if any.
    pub target: String,
}

/// Renders rows as a Markdown table.
pub fn markdown(title: &str, rows: &[Row]) -> String {
    let mut out = format!("\n### {title}\n| measure | value | target |\n|---|---|---|\n");
    for r in rows {
        out.push_str(&format!("| {} | {} | {} |\n", r.what, r.value, r.target));
    }
    out
}

/// A short description of the machine the figures came from.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|k| k.parse::<u64>().ok()))
        .map(|kb| format!("{} GiB", kb / 1024 / 1024))
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, {mem}, {} {}", std::env::consts::OS, std::env::consts::ARCH)
}

/// Resident memory now (VmRSS) of a process in MiB, from /proc.
pub fn rss_mib(pid: u32) -> Option<f64> {
    status_mib(pid, "VmRSS:")
}

/// One line of /proc/PID/status in MiB (`field` with its colon, e.g. "RssAnon:").
pub fn status_mib(pid: u32, field: &str) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = s.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Peak resident memory of a process (VmHWM), MiB.
pub fn peak_rss_mib(pid: u32) -> Option<f64> {
    status_mib(pid, "VmHWM:")
}
