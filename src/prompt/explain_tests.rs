//! Case tables for `explain`: every cause, built from the captured Claude Code request
//! (tests/fixtures/transcripts/captured/claude-api-request-after-hooks.json), plus the seed cases.

use super::cause::CauseKind;
use super::explain::{CacheBreak, explain};
use super::request::Request;
use super::rules::Rules;
use rstest::rstest;
use serde_json::{Value, json};

const CAPTURED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/transcripts/captured/claude-api-request-after-hooks.json"
));

fn base() -> Value {
    let v: Value = serde_json::from_str(CAPTURED).unwrap();
    v["body"].clone()
}

fn run(a: &Value, b: &Value) -> CacheBreak {
    explain(&Request::parse(a, None).unwrap(), &Request::parse(b, None).unwrap(), &Rules::builtin())
}

fn tool_index(v: &Value, name: &str) -> usize {
    v["tools"].as_array().unwrap().iter().position(|t| t["name"] == name).unwrap()
}

fn model_changed(b: &mut Value) {
    b["model"] = json!("claude-sonnet-4-5");
}
fn tool_added(b: &mut Value) {
    b["tools"]
        .as_array_mut()
        .unwrap()
        .insert(3, json!({"name": "Lint", "description": "run the linter", "input_schema": {"type": "object"}}));
}
fn tool_removed(b: &mut Value) {
    let i = tool_index(b, "Bash");
    b["tools"].as_array_mut().unwrap().remove(i);
}
fn tools_reordered(b: &mut Value) {
    b["tools"].as_array_mut().unwrap().swap(0, 1);
}
fn tool_schema_edited(b: &mut Value) {
    let i = tool_index(b, "Read");
    b["tools"][i]["input_schema"]["properties"]["limit"]["description"] = json!("lines to read (changed)");
}
fn system_edited(b: &mut Value) {
    let t = b["system"][2]["text"].as_str().unwrap().to_string();
    b["system"][2]["text"] = json!(format!("{t}\nToday is 2026-11-22."));
}
fn message_mutated(b: &mut Value) {
    b["messages"][0]["content"][2]["text"] = json!("Please echo goodbye using the MCP tool");
}
fn messages_removed(b: &mut Value) {
    let m = b["messages"].as_array_mut().unwrap();
    m.drain(1..3);
}
fn thinking_changed(b: &mut Value) {
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 4096});
}
fn tool_choice_changed(b: &mut Value) {
    b["tool_choice"] = json!({"type": "any"});
}
fn effort_changed(b: &mut Value) {
    b["output_config"]["effort"] = json!("high");
}
fn image_added(b: &mut Value) {
    b["messages"][0]["content"].as_array_mut().unwrap().insert(
        0,
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}),
    );
}
fn ttl_changed(b: &mut Value) {
    b["system"][1]["cache_control"] = json!({"type": "ephemeral", "ttl": "1h"});
}
fn breakpoints_moved(b: &mut Value) {
    let m = b["messages"].as_array_mut().unwrap();
    m[4]["content"][0].as_object_mut().unwrap().remove("cache_control");
    for i in 0..15 {
        m.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("step {i}")}, {"type": "text", "text": "more"}]}));
        m.push(json!({"role": "user", "content": [{"type": "text", "text": format!("ok {i}")}]}));
    }
    let last = m.len() - 1;
    m[last]["content"][0]["cache_control"] = json!({"type": "ephemeral"});
}
fn unknown_field_changed(b: &mut Value) {
    b["speculative_new_field"] = json!(true);
}

#[rstest]
#[case::model_changed(model_changed as fn(&mut Value), CauseKind::ModelChanged, true, "claude-sonnet-4-5")]
#[case::tool_added(tool_added, CauseKind::ToolAdded, true, "Lint")]
#[case::tool_removed(tool_removed, CauseKind::ToolRemoved, true, "Bash")]
#[case::tools_reordered(tools_reordered, CauseKind::ToolsReordered, true, "Bash")]
#[case::tool_schema_edited(tool_schema_edited, CauseKind::ToolSchemaEdited, true, "Read")]
#[case::system_edited(system_edited, CauseKind::SystemEdited, true, "+21 chars")]
#[case::message_mutated(message_mutated, CauseKind::MessageMutated, true, "message 0")]
#[case::messages_removed(messages_removed, CauseKind::MessagesRemoved, true, "dropped")]
#[case::thinking_changed(thinking_changed, CauseKind::ThinkingChanged, true, "budget_tokens")]
#[case::tool_choice_changed(tool_choice_changed, CauseKind::ToolChoiceChanged, true, "any")]
#[case::effort_changed(effort_changed, CauseKind::ParamChanged, true, "high")]
#[case::image_added(image_added, CauseKind::ImagesChanged, true, "0 -> 1")]
#[case::ttl_changed(ttl_changed, CauseKind::TtlChanged, false, "5m -> 1h")]
#[case::breakpoints_moved(breakpoints_moved, CauseKind::BreakpointsMoved, true, "within 20 blocks")]
#[case::unknown_field(unknown_field_changed, CauseKind::UnknownFieldChanged, false, "speculative_new_field")]
fn each_cause_is_named_with_evidence(
    #[case] mutate: fn(&mut Value),
    #[case] kind: CauseKind,
    #[case] breaks: bool,
    #[case] evidence: &str,
) {
    let a = base();
    let mut b = a.clone();
    mutate(&mut b);
    let e = run(&a, &b);
    let cause =
        e.causes.iter().find(|c| c.kind == kind).unwrap_or_else(|| panic!("{kind:?} not found in {:#?}", e.causes));
    assert!(cause.summary.contains(evidence), "{:?}: {}", kind, cause.summary);
    assert!(!cause.fix.is_empty());
    assert_eq!(e.broke, breaks, "{kind:?}: {}", e.verdict);
    if breaks {
        assert_eq!(e.causes[0].kind, kind, "{kind:?} should rank first: {:#?}", e.causes);
        assert!(e.tokens.lost > 0 && e.cost.lost_usd > 0.0);
    }
}

#[rstest]
#[case::tools(tool_added as fn(&mut Value), true)]
#[case::system(system_edited, true)]
#[case::thinking(thinking_changed, false)]
#[case::message(message_mutated, false)]
fn tool_and_system_changes_lose_more_than_message_level_ones(
    #[case] mutate: fn(&mut Value),
    #[case] loses_system_level: bool,
) {
    let a = base();
    let mut b = a.clone();
    mutate(&mut b);
    let e = run(&a, &b);
    let sys_entry = e.layout.iter().find(|l| l.path == "system[2]").unwrap().prefix_tokens;
    assert_eq!(e.tokens.cached_after < sys_entry, loses_system_level, "{}", e.verdict);
}

#[test]
fn appending_a_turn_keeps_the_cache() {
    let a = base();
    let mut b = a.clone();
    b["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": [{"type": "text", "text": "Done."}]}));
    let e = run(&a, &b);
    assert!(!e.broke, "{}", e.verdict);
    assert!(e.divergence.is_none());
    assert_eq!(e.tokens.cached_after, e.tokens.cached_before);
}

#[test]
fn divergence_points_at_the_system_edit() {
    let a = base();
    let mut b = a.clone();
    system_edited(&mut b);
    let d = run(&a, &b).divergence.unwrap();
    assert_eq!(d.path, "system[2].text");
    assert_eq!(d.char_offset, a["system"][2]["text"].as_str().unwrap().chars().count());
    assert!(d.after.contains("Today is"));
}

#[test]
fn idle_gap_beyond_the_ttl_expires_the_cache() {
    let a = json!({"body": base(), "timestamp": "2026-11-22T01:00:00Z"});
    let mut later = base();
    later["messages"].as_array_mut().unwrap().push(json!({"role": "user", "content": "next"}));
    let b = json!({"body": later, "timestamp": "2026-11-22T01:10:00Z"});
    let e = run(&a, &b);
    assert!(e.broke);
    assert_eq!(e.causes[0].kind, CauseKind::IdleGapExceeded, "{:#?}", e.causes);
    assert_eq!(e.idle_gap_secs, Some(600));
    let b_soon = json!({"body": b["body"].clone(), "timestamp": "2026-11-22T01:04:00Z"});
    assert!(!run(&a, &b_soon).broke);
}

#[test]
fn a_prefix_below_the_minimum_caches_nothing() {
    let a = json!({"model": "claude-opus-4-5", "system": [{"type": "text", "text": "short system prompt", "cache_control": {"type": "ephemeral"}}], "messages": [{"role": "user", "content": "hi"}]});
    let e = run(&a, &a.clone());
    assert!(!e.broke);
    assert_eq!(e.tokens.cached_before, 0);
    assert!(
        e.causes.iter().any(|c| c.kind == CauseKind::PrefixBelowMinimum && c.summary.contains("4096")),
        "{:#?}",
        e.causes
    );
}

#[rstest]
#[case(0, false)]
#[case(1, true)]
fn reported_usage_is_checked_against_the_prediction(#[case] scale: u64, #[case] agrees: bool) {
    let a = base();
    let mut later = base();
    later["messages"].as_array_mut().unwrap().push(json!({"role": "user", "content": "next"}));
    let predicted = run(&a, &later).tokens.cached_after;
    let b = json!({"body": later, "usage": {"input_tokens": 5, "cache_read_input_tokens": predicted * scale, "cache_creation_input_tokens": 10}});
    let r = run(&a, &b).reported.unwrap();
    assert_eq!(r.agrees, agrees, "{}", r.note);
}

#[test]
fn openai_automatic_caching_counts_128_token_steps_from_1024() {
    let long = "You are a coding agent. ".repeat(400);
    let a = json!({"model": "gpt-4o", "messages": [{"role": "system", "content": long}, {"role": "user", "content": "first"}]});
    let mut b = a.clone();
    b["messages"].as_array_mut().unwrap().push(json!({"role": "user", "content": "second"}));
    let e = run(&a, &b);
    assert!(!e.broke);
    assert_eq!(e.tokens.cached_after % 128, 0);
    assert!(e.tokens.cached_after >= 1024);
    let mut c = a.clone();
    c["messages"][0]["content"] = json!(format!("Now: 03:00. {long}"));
    let e = run(&a, &c);
    assert!(e.broke && e.causes[0].kind == CauseKind::SystemEdited, "{:#?}", e.causes);
}
