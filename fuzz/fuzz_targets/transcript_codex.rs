//! Fuzz target: the Codex rollout reader. A `session_meta` line is prepended so the fuzzer's
//! input always goes down the Codex path, then everything derived from it is exercised.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "transcript_common.rs"]
mod transcript_common;

const META: &str = "{\"type\":\"session_meta\",\"payload\":{\"id\":\"fuzz\"}}\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    transcript_common::exercise(&format!("{META}{text}"));
});
