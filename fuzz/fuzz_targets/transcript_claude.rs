//! Fuzz target: the Claude Code JSONL reader, then everything refrain derives from a transcript
//! (requests per turn, the conversation for compaction, the session's cache-break report).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "transcript_common.rs"]
mod transcript_common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    transcript_common::exercise(text);
});
