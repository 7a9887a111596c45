//! `refrain-bench prompt`: times explain_cache_break on two ~150k-token requests and
//! compact_preview on a ~10 MB Claude Code transcript, both generated deterministically in
//! memory from real request shapes. Run it from a release build.

use clap::Args;
use refrain::prompt::compact_cost::{preview, resolve_policy};
use refrain::prompt::{Request, Rules, explain};
use refrain::transcript::Transcript;
use serde_json::{Value, json};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// The captured Claude Code request the synthetic requests grow from.
const CAPTURED: &str =
    include_str!("../../../../tests/fixtures/transcripts/captured/claude-api-request-after-hooks.json");

/// Arguments of `refrain-bench prompt`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Runs per measurement (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Target request size in estimated tokens.
    #[arg(long, default_value_t = 150_000)]
    request_tokens: u64,
    /// Target transcript size in bytes.
    #[arg(long, default_value_t = 10_000_000)]
    transcript_bytes: usize,
}

/// Runs the benchmark.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let rules = Rules::builtin();
    let (a, b) = requests(args.request_tokens)?;
    let (ta, tb) = (a.to_string(), b.to_string());
    let mut out = std::io::stdout().lock();
    let explain_ms = median(args.runs, || {
        let (va, vb): (Value, Value) =
            (serde_json::from_str(&ta).unwrap_or_default(), serde_json::from_str(&tb).unwrap_or_default());
        if let (Ok(ra), Ok(rb)) = (Request::parse(&va, None), Request::parse(&vb, None)) {
            let e = explain(&ra, &rb, &rules);
            std::hint::black_box(e);
        }
    });
    let ra = Request::parse(&a, None)?;
    writeln!(
        out,
        "explain_cache_break: two requests of ~{} tokens ({} bytes each), median of {} runs: {explain_ms:.1} ms (target < 50 ms; JSON text to report)",
        ra.tokens(),
        ta.len(),
        args.runs
    )?;
    let text = transcript(args.transcript_bytes);
    let policy = resolve_policy(&rules, Some("anthropic_clear_tool_uses"), None)?;
    let mut actions = 0;
    let compact_ms = median(args.runs, || {
        if let Some(t) = Transcript::parse(&text)
            && let model = t.model().to_string()
            && let Ok(p) = preview(t.into_conversation(), &policy, None, &model, &rules, false)
        {
            actions = p.actions.len();
        }
    });
    writeln!(
        out,
        "compact_preview: transcript of {} bytes, {actions} actions, median of {} runs: {compact_ms:.1} ms (target < 300 ms; JSONL text to report)",
        text.len(),
        args.runs
    )?;
    Ok(ExitCode::SUCCESS)
}

fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn filler(i: usize, bytes: usize) -> String {
    let line = format!(
        "src/module_{i}.rs:{i}: fn handler_{i}(request: &Request) -> Result<Response, Error> {{ /* body */ }}\n"
    );
    line.repeat(bytes / line.len() + 1)
}

/// Two requests: B edits the system prompt's last block and appends a turn.
pub(super) fn requests(tokens: u64) -> anyhow::Result<(Value, Value)> {
    let captured: Value = serde_json::from_str(CAPTURED)?;
    let mut a = captured.get("body").cloned().unwrap_or(captured);
    let mut i = 0;
    while Request::parse(&a, None)?.tokens() < tokens {
        if let Some(m) = a.get_mut("messages").and_then(Value::as_array_mut) {
            let id = format!("toolu_bench{i:05}");
            m.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("/src/module_{i}.rs")}}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": filler(i, 8000)}]}));
        }
        i += 1;
    }
    let mut b = a.clone();
    if let Some(sys) =
        b.get_mut("system").and_then(Value::as_array_mut).and_then(|s| s.last_mut()).and_then(|s| s.get_mut("text"))
    {
        *sys = Value::String(format!("{} Current time: 2026-11-22T03:00:00Z", sys.as_str().unwrap_or_default()));
    }
    if let Some(m) = b.get_mut("messages").and_then(Value::as_array_mut) {
        m.push(json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}));
    }
    Ok((a, b))
}

/// A Claude Code session: one line per content block, as the agent writes it.
pub(super) fn transcript(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 20_000);
    let mut i = 0;
    while out.len() < bytes {
        let ts = format!("2026-11-22T01:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
        let id = format!("toolu_bench{i:06}");
        let usage = json!({"input_tokens": 10, "cache_creation_input_tokens": 800, "cache_read_input_tokens": 1000 * i, "output_tokens": 20});
        let user = json!({"type": "user", "isSidechain": false, "timestamp": ts, "message": {"role": "user", "content": format!("step {i}: read the next module")}});
        let asst = json!({"type": "assistant", "isSidechain": false, "timestamp": ts, "message": {"id": format!("msg_{i:06}"), "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": id, "name": if i % 3 == 0 { "Bash" } else { "Read" }, "input": {"file_path": format!("/src/module_{i}.rs")}}], "usage": usage}});
        let result = json!({"type": "user", "isSidechain": false, "timestamp": ts, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": filler(i, 6000)}]}});
        for l in [user, asst, result] {
            out.push_str(&l.to_string());
            out.push('\n');
        }
        i += 1;
    }
    out
}
