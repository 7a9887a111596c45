//! Reader tests over every sample transcript (tests/fixtures/transcripts) and hand-made edge cases.

use super::*;
use crate::prompt::Rules;
use rstest::rstest;

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/transcripts/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[rstest]
#[case("captured/claude-transcript-mcp-call.jsonl", Format::ClaudeCode, 2, 0)]
#[case("captured/claude-transcript-mcp-call-then-compact.jsonl", Format::ClaudeCode, 2, 1)]
#[case("captured/codex-rollout-mcp-call.jsonl", Format::Codex, 2, 0)]
#[case("captured/codex-exec-json.jsonl", Format::Codex, 1, 0)]
#[case("captured/claude-print-stream-json.jsonl", Format::ClaudeCode, 2, 0)]
#[case("captured/codex-rollout-with-compaction.jsonl", Format::Codex, 3, 1)]
#[case("claude-code-log/dag_compact_after_rewind.jsonl", Format::ClaudeCode, 4, 1)]
#[case("claude-code-log/edge_cases.jsonl", Format::ClaudeCode, 3, 0)]
#[case("claude-code-log/representative_messages.jsonl", Format::ClaudeCode, 4, 0)]
#[case("claude-code-log/session_b.jsonl", Format::ClaudeCode, 1, 0)]
#[case("claude-code-log/todowrite_examples.jsonl", Format::ClaudeCode, 4, 0)]
#[case("ccusage/claude-project-alpha-chat.jsonl", Format::ClaudeCode, 3, 0)]
#[case("ccusage/claude-project-beta-chat.jsonl", Format::ClaudeCode, 2, 0)]
#[case("ccusage/codex-session-alpha.jsonl", Format::Codex, 2, 0)]
fn every_sample_transcript_reads(
    #[case] rel: &str,
    #[case] format: Format,
    #[case] min_turns: usize,
    #[case] compactions: usize,
) {
    let t = Transcript::parse(&fixture(rel)).unwrap();
    assert_eq!(t.format, format);
    assert!(t.turns.len() >= min_turns, "{rel}: {} turns", t.turns.len());
    assert_eq!(t.compactions.len(), compactions, "{rel}");
    let report = explain_session(&t, &Rules::builtin(), None).unwrap();
    assert_eq!(report.turns, t.turns.len());
}

#[test]
fn claude_code_request_log_rebuilds_requests_exactly() {
    let t = Transcript::parse(&fixture("captured/claude-transcript-mcp-call.jsonl")).unwrap();
    assert_eq!(t.turns.len(), 2);
    assert_eq!(t.turns[0].reconstruction, Reconstruction::Exact);
    let r = t.request(1).unwrap();
    assert!(r.tool_names().len() > 50, "tools come from the logged shape");
    assert!(r.params.contains_key("thinking"));
    assert_eq!(r.message_count(), 4);
    assert_eq!(t.turns[1].usage.as_ref().and_then(|u| u.cache_read_tokens), Some(9000));
    let e = crate::prompt::explain(&t.request(0).unwrap(), &r, &Rules::builtin());
    assert!(!e.broke, "an append-only turn keeps the cache: {}", e.verdict);
}

#[test]
fn assistant_blocks_are_merged_by_message_id() {
    let t = Transcript::parse(&fixture("captured/claude-transcript-mcp-call.jsonl")).unwrap();
    let seg = &t.segments[0];
    let assistant: Vec<&Value> = seg.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(assistant[0]["content"].as_array().unwrap().len(), 2, "text + tool_use of msg_mock0001");
}

#[test]
fn bad_lines_are_skipped_and_counted() {
    let mut text = fixture("claude-code-log/representative_messages.jsonl");
    text.push_str("{not json\n\n");
    let t = Transcript::parse(&text).unwrap();
    assert_eq!(t.bad_lines, 1);
    assert!(!t.turns.is_empty());
}

#[test]
fn sidechains_are_counted_not_mixed_in() {
    let lines = [
        r#"{"type":"user","isSidechain":false,"message":{"role":"user","content":"main"}}"#,
        r#"{"type":"assistant","isSidechain":true,"message":{"id":"m_side","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"side"}]}}"#,
        r#"{"type":"assistant","isSidechain":false,"message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"main reply"}]}}"#,
    ];
    let t = Transcript::parse(&lines.join("\n")).unwrap();
    assert_eq!(t.sidechain_messages, 1);
    assert_eq!(t.turns.len(), 1);
    assert!(!serde_json::to_string(&t.segments).unwrap().contains("side\""));
}

#[test]
fn codex_compaction_starts_a_new_segment_and_usage_has_cached_tokens() {
    let t = Transcript::parse(&fixture("captured/codex-rollout-with-compaction.jsonl")).unwrap();
    assert_eq!(t.segments.len(), 2);
    assert!(t.turns.iter().any(|x| x.usage.as_ref().and_then(|u| u.cache_read_tokens) == Some(4096)));
    let conv = t.conversation();
    assert!(!conv.is_empty());
}

#[test]
fn compaction_in_a_transcript_is_reported_as_a_cause() {
    let t = Transcript::parse(&fixture("claude-code-log/dag_compact_after_rewind.jsonl")).unwrap();
    let i = t.turns.iter().position(|x| x.after_compaction).unwrap();
    let r = explain_session(&t, &Rules::builtin(), Some((i - 1, i))).unwrap();
    let e = r.breaks[0].explanation.as_ref().unwrap();
    assert!(e.causes.iter().any(|c| c.kind == crate::prompt::cause::CauseKind::Compacted), "{:#?}", e.causes);
}
