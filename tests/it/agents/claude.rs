//! Claude Code (2.1.330) end to end: two sessions through the hooks, and `claude mcp list` over
//! stdio, streamable HTTP and SSE.

use super::clients::{Clients, opted_out};
use super::mock::{Api, Mock};
use super::*;
use serde_json::json;

/// The tools the sessions may use without asking.
const ALLOWED: &str = "TaskCreate TaskUpdate Read Edit mcp__refrain";

/// Runs `claude -p PROMPT` in the project against the mock; returns stdout and the wall time.
pub(super) fn session(s: &Scratch, mock: &Mock, prompt: &str) -> (String, Duration) {
    session_with(s, mock, prompt, false)
}

/// `session`, with Claude Code's tool search on (its default: MCP tools are deferred) or off
/// (every tool definition in every request, as the scripted sessions need to call refrain's).
fn session_with(s: &Scratch, mock: &Mock, prompt: &str, tool_search: bool) -> (String, Duration) {
    let clients = Clients::get();
    let mut cmd = Command::new(clients.bin("claude"));
    cmd.args(["-p", prompt, "--allowedTools", ALLOWED, "--output-format", "stream-json", "--verbose"])
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", clients.path())
        .env("HOME", &s.home)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", mock.port))
        .env("ANTHROPIC_API_KEY", "sk-ant-offline-test")
        .env("ENABLE_TOOL_SEARCH", if tool_search { "true" } else { "false" })
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let (out, took) = run_agent(cmd, &mock.log.join("claude"), SESSION_LIMIT);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "claude failed: {stderr}\n{stdout}");
    // Claude Code validates tool schemas with ajv and complains about non-standard formats.
    assert!(!stderr.contains("unknown format"), "refrain's tool schemas upset Claude Code:\n{stderr}");
    (stdout, took)
}

fn read_args(s: &Scratch) -> Value {
    json!({"namespace": "hooks/claude-code", "tool": "Read", "args": {"file_path": s.file(NOTES)}})
}

#[test]
fn claude_code_sessions_reach_refrain_store_a_plan_and_get_it_back() {
    if opted_out("claude_code_sessions_reach_refrain_store_a_plan_and_get_it_back") {
        return;
    }
    let s = Scratch::new();
    let log = s.install("claude");
    assert!(log.contains(".claude.json") && log.contains("settings.json"), "{log}");

    // Session 1: plan with the task tools, read the file, check refrain recorded the read; read
    // the guide twice (the second read gets refrain's note) and edit it (Claude Code's edit still
    // sees the file as read); edit the notes, check the record is gone, finish the tasks.
    let (notes, guide) = (s.file(NOTES), s.file(GUIDE));
    let script = json!({"steps": [
        {"name": "TaskCreate", "input": {"subject": "Read notes.txt", "description": "Find the typo"}},
        {"name": "TaskCreate", "input": {"subject": "Fix the typo in notes.txt", "description": "teh -> the"}},
        {"name": "Read", "input": {"file_path": notes}},
        {"name": "Read", "input": {"file_path": guide}},
        {"name": "Read", "input": {"file_path": guide}},
        {"name": "Edit", "input": {"file_path": guide, "old_string": "30. Step 30", "new_string": "30. Step thirty"}},
        {"name": "mcp__refrain__response_cache_get", "input": read_args(&s)},
        {"name": "TaskUpdate", "input": {"taskId": "1", "status": "completed"}},
        {"name": "Edit", "input": {"file_path": notes, "old_string": "teh", "new_string": "the"}},
        {"name": "mcp__refrain__response_cache_get", "input": read_args(&s)},
        {"name": "TaskUpdate", "input": {"taskId": "2", "status": "completed"}},
        {"name": "mcp__refrain__cache_stats", "input": {}},
    ], "final": "Fixed the typo in notes.txt."});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Anthropic, &tmp.path().join("s1"), &script);
    let (stream, took) = session(&s, &mock, "Fix the typo in notes.txt");
    eprintln!("claude session 1: {} ms", took.as_millis());

    assert!(stream.contains(r#""mcp_servers":[{"name":"refrain","status":"connected""#), "{stream}");
    let calls = mock.calls(Api::Anthropic);
    let names: Vec<&str> = calls.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names.len(), 12, "the session did not run every scripted step: {calls:#?}");
    assert_second_read_deduplicated(&calls, "Read");
    let guide_now = std::fs::read_to_string(s.project.join(GUIDE)).unwrap();
    assert!(guide_now.contains("30. Step thirty"), "the Edit after a deduplicated Read did not apply: {calls:#?}");
    let gets = results_of(&calls, "mcp__refrain__response_cache_get");
    assert_eq!(gets[0]["status"], "hit", "the Read was not recorded by the PostToolUse hook: {}", gets[0]);
    assert_eq!(gets[0]["result"]["file"]["content"], NOTES_BEFORE, "{}", gets[0]);
    assert_eq!(gets[1]["status"], "miss", "the Edit did not invalidate the recorded Read: {}", gets[1]);
    let stats = &results_of(&calls, "mcp__refrain__cache_stats")[0];
    assert_registered_settings_reached_the_server(stats, &s);
    assert_eq!(stats["counters"]["dedup"]["reads_deduplicated"], 1, "the dedup was not counted: {stats}");
    assert_eq!(std::fs::read_to_string(s.project.join(NOTES)).unwrap(), "Notes\nthe quick fox\n");

    // The Stop hook stored the turn as a plan.
    let plans = s.plans();
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert!(plans[0].contains("Fix the typo in notes.txt"), "{plans:?}");
    let plan_id = plans[0].split_whitespace().next().unwrap().to_string();
    let shown = s.refrain(&["plans", "show", &plan_id]);
    assert!(shown.contains("\"Read\"") && shown.contains("\"Edit\"") && !shown.contains("TaskCreate"), "{shown}");

    // Session 2, a similar prompt: the UserPromptSubmit hook hands the model the stored plan;
    // the model reports the outcome back through plan_feedback.
    let script = json!({"steps": [
        {"name": "mcp__refrain__plan_feedback", "input": {"plan_id": plan_id, "outcome": "success"}},
    ], "final": "Done."});
    // A hook offers only plans this user has seen work: report the first session's success.
    assert!(s.refrain(&["plans", "feedback", &plan_id, "success"]).contains("your reports 1 worked"));
    let mock2 = Mock::start(Api::Anthropic, &tmp.path().join("s2"), &script);
    let (_, took) = session(&s, &mock2, "Please fix the typo in notes.txt");
    eprintln!("claude session 2: {} ms", took.as_millis());
    assert_plan_handed_back(&mock2, Api::Anthropic, &plan_id);
}

/// A Read result as Claude Code numbers it for the model, back to the text (`N<tab>line`).
fn unnumbered(result: &str) -> String {
    result.split('\n').map(|l| l.split_once('\t').map_or(l, |(_, rest)| rest)).collect::<Vec<_>>().join("\n")
}

/// Issue 29's two cases with the real Claude Code: the main agent adds the final newline a file
/// lacked and reads it again (the model must get a diff that rebuilds the file with patch, not
/// "unchanged"); then it reads the guide and starts a subagent whose first action reads the guide
/// too (the subagent must get the whole file, its parent's read is not in its context) and whose
/// second read gets the note, from its own transcript.
#[test]
fn claude_code_subagents_get_files_they_never_saw_and_a_fixed_final_newline_gets_a_diff() {
    if opted_out("claude_code_subagents_get_files_they_never_saw_and_a_fixed_final_newline_gets_a_diff") {
        return;
    }
    let s = Scratch::new();
    s.install("claude");
    let lint: String = (1..=40).map(|i| format!("lint rule {i}: keep the line short and the file tidy\n")).collect();
    let lint = lint.trim_end().to_string();
    std::fs::write(s.project.join("lint.md"), &lint).unwrap();
    let (lint_path, guide) = (s.file("lint.md"), s.file(GUIDE));
    let last = lint.lines().last().unwrap().to_string();
    let marker = "SUBAGENT-READS-THE-GUIDE";
    let script = json!({"steps": [
        {"name": "Read", "input": {"file_path": lint_path}},
        {"name": "Edit", "input": {"file_path": lint_path, "old_string": last, "new_string": format!("{last}\n")}},
        {"name": "Read", "input": {"file_path": lint_path}},
        {"name": "Read", "input": {"file_path": guide}},
        {"name": "Agent", "input": {"description": "Check the guide", "subagent_type": "general-purpose",
            "prompt": format!("{marker}: read guide.md and say what step 30 is")}},
    ], "final": "Done.", "agents": {marker: {"steps": [
        {"name": "Read", "input": {"file_path": guide}},
        {"name": "Read", "input": {"file_path": guide}},
    ], "final": "Step 30 checks the build."}}});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Anthropic, &tmp.path().join("s"), &script);
    let prompt = "Add the missing final newline to lint.md, then have a subagent check the guide";
    let args = ["-p", prompt, "--allowedTools", "Read Edit Agent", "--output-format", "stream-json", "--verbose"];
    let clients = Clients::get();
    let mut cmd = Command::new(clients.bin("claude"));
    cmd.args(args)
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", clients.path())
        .env("HOME", &s.home)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", mock.port))
        .env("ANTHROPIC_API_KEY", "sk-ant-offline-test")
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let (out, took) = run_agent(cmd, &mock.log.join("claude"), SESSION_LIMIT);
    assert!(out.status.success(), "claude failed: {}", String::from_utf8_lossy(&out.stderr));
    eprintln!("claude subagent session: {} ms", took.as_millis());

    // The fix: the file on disk now ends in a newline, and the model got a diff that rebuilds it.
    let fixed = std::fs::read_to_string(s.project.join("lint.md")).unwrap();
    assert_eq!(fixed, format!("{lint}\n"), "the Edit did not add the final newline");
    let main = mock.calls_in(Api::Anthropic, marker, false);
    let reads: Vec<String> = main
        .iter()
        .filter(|c| c["name"] == "Read" && c["input"].to_string().contains("lint.md"))
        .map(|c| c["result"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(reads.len(), 2, "{main:#?}");
    let note = unnumbered(&reads[1]);
    assert!(note.starts_with("[refrain]") && note.contains(" changed since your read at message"), "{note}");
    assert!(note.contains("\\ No newline at end of file"), "{note}");
    let diff = note.split_once('\n').map(|(_, d)| d).unwrap_or_default();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lint.md"), &lint).unwrap();
    std::fs::write(dir.path().join("d.diff"), diff).unwrap();
    let patch = Command::new("patch").args(["--quiet", "lint.md", "-i", "d.diff"]).current_dir(dir.path()).output();
    assert!(patch.is_ok_and(|o| o.status.success()), "patch refused the diff the model got:\n{diff}");
    assert_eq!(std::fs::read_to_string(dir.path().join("lint.md")).unwrap(), fixed, "{diff}");

    // The subagent: its first read of the guide (which its parent had read) shows the file, its
    // second gets the note.
    let sub = mock.calls_in(Api::Anthropic, marker, true);
    let reads: Vec<&str> =
        sub.iter().filter(|c| c["name"] == "Read").map(|c| c["result"].as_str().unwrap_or("")).collect();
    assert_subagent_shown_then_noted(&reads, &sub);
}

#[test]
fn claude_mcp_list_shows_refrain_connected_over_stdio_http_and_sse() {
    if opted_out("claude_mcp_list_shows_refrain_connected_over_stdio_http_and_sse") {
        return;
    }
    let s = Scratch::new();
    s.install("claude");
    let http = crate::http::server::Server::start("127.0.0.1:0", &[], &[], crate::http::server::Model::None);
    let clients = Clients::get();
    let claude = |args: &[&str]| {
        let mut cmd = Command::new(clients.bin("claude"));
        cmd.args(args).current_dir(&s.project).env_clear().env("PATH", clients.path()).env("HOME", &s.home);
        let tmp = tempfile::tempdir().unwrap();
        let (out, _) = run_agent(cmd, tmp.path(), Duration::from_secs(60));
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "claude {args:?} failed:\n{text}");
        text
    };
    claude(&["mcp", "add", "--scope", "user", "--transport", "http", "refrain-http", &http.url("/mcp")]);
    claude(&["mcp", "add", "--scope", "user", "--transport", "sse", "refrain-sse", &http.url("/sse")]);
    let list = claude(&["mcp", "list"]);
    for name in ["refrain", "refrain-http", "refrain-sse"] {
        let line = list.lines().find(|l| l.starts_with(&format!("{name}:"))).unwrap_or_else(|| panic!("{list}"));
        assert!(line.contains("Connected"), "{name} is not connected:\n{list}\nserver log:\n{}", http.log());
    }
    assert!(list.contains(&*s.home.join("bin/refrain").to_string_lossy()), "{list}");
}

/// The same short session without and with refrain, with Claude Code's tool search on (its
/// default: refrain's tools are deferred, each request names them) and off (every definition in
/// every request): what refrain adds to each request stays within the budget either way.
#[test]
fn claude_code_requests_carry_at_most_the_budget_of_refrain() {
    if opted_out("claude_code_requests_carry_at_most_the_budget_of_refrain") {
        return;
    }
    for (tool_search, label) in [(true, "claude-code"), (false, "claude-code (tool search off)")] {
        let tmp = tempfile::tempdir().unwrap();
        let bare = Scratch::new();
        let script =
            json!({"steps": [{"name": "Read", "input": {"file_path": bare.file(NOTES)}}], "final": "Read it."});
        let m0 = Mock::start(Api::Anthropic, &tmp.path().join("bare"), &script);
        session_with(&bare, &m0, "Read notes.txt", tool_search);
        let s = Scratch::new();
        s.default_tools();
        s.install("claude");
        let script = json!({"steps": [{"name": "Read", "input": {"file_path": s.file(NOTES)}}], "final": "Read it."});
        let m1 = Mock::start(Api::Anthropic, &tmp.path().join("with"), &script);
        session_with(&s, &m1, "Read notes.txt", tool_search);
        Overhead::measure(&m0, &m1).assert_within(label, refrain::tools::surface::BUDGET_TOKENS);
    }
}

/// The agent is the judge, end to end (`take_a_suggestion`): a reworded second session gets the
/// stored plan as a suggestion through the UserPromptSubmit hook, the model takes it by its id and
/// reports success, and a third session in those words gets the plan as a verified hit.
#[test]
fn claude_code_takes_a_suggested_plan_and_its_wording_becomes_a_hit() {
    if opted_out("claude_code_takes_a_suggested_plan_and_its_wording_becomes_a_hit") {
        return;
    }
    let s = Scratch::new();
    s.install("claude");
    s.lower_suggestion_floors();
    let tmp = tempfile::tempdir().unwrap();
    let notes = s.file(NOTES);
    let first = json!([
        {"name": "Read", "input": {"file_path": notes}},
        {"name": "Edit", "input": {"file_path": notes, "old_string": "teh", "new_string": "the"}},
    ]);
    let tools = Tools { api: Api::Anthropic, prefix: "mcp__refrain__", args: "input" };
    take_a_suggestion(&s, tools, first, |dir, script, prompt| {
        let mock = Mock::start(Api::Anthropic, &tmp.path().join(dir), script);
        let (_, took) = session(&s, &mock, prompt);
        eprintln!("claude suggestion {dir}: {} ms", took.as_millis());
        mock
    });
}
