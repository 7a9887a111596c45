//! A synthetic agent history for `report-history`: Claude Code session files and Codex rollouts
//! shaped like the real ones (prompts, tool calls and results, usage with cache reads and writes,
//! breaks, compactions, re-reads), written deterministically from a seed.

use serde_json::{Value, json};
use std::io::{BufWriter, Write};
use std::path::Path;

/// A small deterministic generator (xorshift64*): the same seed writes the same history.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const WORDS: [&str; 16] = [
    "fn", "let", "match", "struct", "impl", "return", "self", "value", "error", "config", "request", "store", "async",
    "await", "tokens", "cache",
];

fn filler(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        s.push(if rng.below(9) == 0 { '\n' } else { ' ' });
    }
    s
}

fn ts(ms: i64) -> String {
    let secs = ms / 1000;
    let days = secs / 86_400;
    // 2026-01-01 is day 20454 since the epoch; the bench spreads sessions over a few months.
    let day = days - 20_454;
    let (month, dom) = (1 + day / 28, 1 + day % 28);
    let rem = secs % 86_400;
    format!("2026-{month:02}-{dom:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem / 60 % 60, rem % 60, ms % 1000)
}

/// Writes one Claude Code session of about `bytes` bytes.
pub fn claude_session(path: &Path, seed: u64, bytes: u64, start_ms: i64) -> std::io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let cwd = format!("/home/dev/project-{}", seed % 7);
    let (mut t, mut written, mut n, mut cached) = (start_ms, 0u64, 0u64, 0u64);
    let files: Vec<String> = (0..12).map(|i| format!("{cwd}/src/module_{i}.rs")).collect();
    let line = |v: Value, w: &mut BufWriter<std::fs::File>, written: &mut u64| -> std::io::Result<()> {
        let s = v.to_string();
        *written += s.len() as u64 + 1;
        w.write_all(s.as_bytes())?;
        w.write_all(b"\n")
    };
    while written < bytes {
        n += 1;
        t += if rng.below(20) == 0 { 600_000 } else { 4_000 + rng.below(20_000) as i64 };
        if n % 15 == 1 {
            let prompt = format!("fix the {} bug in module {}", WORDS[rng.below(16) as usize], rng.below(12));
            line(
                json!({"type": "user", "timestamp": ts(t), "cwd": cwd, "sessionId": seed, "isSidechain": false,
                "message": {"role": "user", "content": prompt}}),
                &mut w,
                &mut written,
            )?;
        }
        // Claude Code compacts when the context fills up (about 160k tokens here).
        if cached > 160_000 {
            line(
                json!({"type": "system", "subtype": "compact_boundary", "timestamp": ts(t), "cwd": cwd,
                "compactMetadata": {"trigger": "auto", "preTokens": cached}}),
                &mut w,
                &mut written,
            )?;
            cached = 0;
        }
        let file = &files[rng.below(files.len() as u64) as usize];
        let id = format!("toolu_{seed}_{n}");
        let model = if rng.below(300) == 0 { "claude-opus-4-5-20251101" } else { "claude-sonnet-4-5-20250929" };
        let (read, write) = if rng.below(25) == 0 { (0, cached + 3000) } else { (cached, 1500 + rng.below(3000)) };
        cached = read + write;
        let tool = if rng.below(6) == 0 {
            json!({"type": "tool_use", "id": id, "name": "Edit", "input": {"file_path": file, "old_string": "a", "new_string": "b"}})
        } else {
            json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": file}})
        };
        line(
            json!({"type": "assistant", "timestamp": ts(t), "cwd": cwd, "sessionId": seed, "isSidechain": false, "requestId": format!("req_{n}"),
            "message": {"id": format!("msg_{seed}_{n}"), "role": "assistant", "model": model,
                "content": [{"type": "text", "text": filler(&mut rng, 200)}, tool],
                "usage": {"input_tokens": 3 + rng.below(50), "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 200}}}),
            &mut w,
            &mut written,
        )?;
        let size = 2_000 + rng.below(10_000) as usize;
        line(
            json!({"type": "user", "timestamp": ts(t + 300), "cwd": cwd, "sessionId": seed, "isSidechain": false,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": filler(&mut rng, size)}]}}),
            &mut w,
            &mut written,
        )?;
    }
    w.flush()
}

/// Writes one Codex rollout of about `bytes` bytes.
pub fn codex_rollout(path: &Path, seed: u64, bytes: u64, start_ms: i64) -> std::io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let cwd = format!("/home/dev/project-{}", seed % 7);
    let (mut t, mut written, mut n, mut total) = (start_ms, 0u64, 0u64, 0u64);
    let line = |v: Value, w: &mut BufWriter<std::fs::File>, written: &mut u64| -> std::io::Result<()> {
        let s = v.to_string();
        *written += s.len() as u64 + 1;
        w.write_all(s.as_bytes())?;
        w.write_all(b"\n")
    };
    line(
        json!({"timestamp": ts(t), "type": "session_meta", "payload": {"id": format!("s{seed}"), "cwd": cwd,
        "base_instructions": {"text": filler(&mut rng, 4000)}}}),
        &mut w,
        &mut written,
    )?;
    line(
        json!({"timestamp": ts(t), "type": "turn_context", "payload": {"model": "gpt-5-codex", "cwd": cwd}}),
        &mut w,
        &mut written,
    )?;
    let mut cached = 0u64;
    while written < bytes {
        n += 1;
        t += 3_000 + rng.below(30_000) as i64;
        if n % 12 == 1 {
            line(
                json!({"timestamp": ts(t), "type": "response_item", "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": format!("add a test for module {}", rng.below(12))}]}}),
                &mut w,
                &mut written,
            )?;
        }
        if cached > 200_000 {
            line(
                json!({"timestamp": ts(t), "type": "compacted", "payload": {"message": filler(&mut rng, 2_000)}}),
                &mut w,
                &mut written,
            )?;
            cached = 0;
        }
        let call = format!("call_{seed}_{n}");
        let file = format!("src/module_{}.rs", rng.below(12));
        let args = json!({"command": ["bash", "-lc", format!("sed -n '1,200p' {file}")], "workdir": cwd}).to_string();
        line(
            json!({"timestamp": ts(t), "type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": call, "arguments": args}}),
            &mut w,
            &mut written,
        )?;
        let size = 2_000 + rng.below(8_000) as usize;
        line(
            json!({"timestamp": ts(t + 200), "type": "response_item", "payload": {"type": "function_call_output", "call_id": call,
            "output": filler(&mut rng, size)}}),
            &mut w,
            &mut written,
        )?;
        let input = cached + 2_000 + rng.below(3_000);
        let read = if rng.below(30) == 0 { 0 } else { cached };
        cached = input;
        total += input;
        line(
            json!({"timestamp": ts(t + 250), "type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": input, "cached_input_tokens": read, "output_tokens": 100},
            "total_token_usage": {"input_tokens": total, "cached_input_tokens": read, "output_tokens": 100 * n}}}}),
            &mut w,
            &mut written,
        )?;
        line(
            json!({"timestamp": ts(t + 300), "type": "response_item", "payload": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": filler(&mut rng, 300)}]}}),
            &mut w,
            &mut written,
        )?;
    }
    w.flush()
}
