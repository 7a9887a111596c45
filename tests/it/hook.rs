//! `refrain hook` as the agents run it: the real binary, a captured payload on stdin, a scratch
//! project and REFRAIN_HOME. Every answer is exit 0; malformed payloads get silence.

use rstest::rstest;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks")
}

/// `refrain ARGS` in `project` with its own home and no model, stdin and stdout piped.
fn refrain(home: &Path, project: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_refrain"));
    cmd.args(args)
        .current_dir(project)
        .env("REFRAIN_HOME", home)
        .env("REFRAIN__MODEL__ENABLED", "false")
        .env_remove("REFRAIN_PROJECT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    cmd
}

/// Runs a hook with `stdin`, returns (stdout, elapsed).
pub fn hook(home: &Path, project: &Path, agent: &str, event: &str, stdin: &[u8]) -> (String, Duration) {
    let started = Instant::now();
    let mut child = refrain(home, project, &["hook", agent, event]).stderr(Stdio::piped()).spawn().unwrap();
    // A hook for an event refrain ignores may exit before reading: a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "hook {agent} {event} failed: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), started.elapsed())
}

/// A captured payload pointed at the scratch project and the fixture transcript.
fn payload(file: &str, project: &Path) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(fixtures().join(file)).unwrap()).unwrap();
    v["cwd"] = project.to_string_lossy().into();
    let transcript =
        if file.starts_with("claude") { "claude-transcript-mcp-call.jsonl" } else { "codex-rollout-mcp-call.jsonl" };
    v["transcript_path"] = fixtures().join(transcript).to_string_lossy().into();
    serde_json::to_vec(&v).unwrap()
}

#[rstest]
#[case("claude", "UserPromptSubmit", "claude-UserPromptSubmit-1795311204932778601.json")]
#[case("claude", "PreToolUse", "claude-PreToolUse-1795311205203548705.json")]
#[case("claude", "PostToolUse", "claude-PostToolUse-1795311205255321560.json")]
#[case("claude", "PostToolUse", "claude-PostToolUse-Read.json")]
#[case("claude", "Stop", "claude-Stop-1795311205359547498.json")]
#[case("codex", "UserPromptSubmit", "codex-UserPromptSubmit-1795311377691403368.json")]
#[case("codex", "PreToolUse", "codex-PreToolUse-1795311377751438877.json")]
#[case("codex", "PostToolUse", "codex-PostToolUse-1795311377782581679.json")]
#[case("codex", "Stop", "codex-Stop-1795311377835325656.json")]
#[case("claude", "SessionStart", "claude-SessionStart-1795311204028644821.json")]
fn captured_payloads_are_answered_without_breaking_the_agent(
    #[case] agent: &str,
    #[case] event: &str,
    #[case] file: &str,
) {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (out, _) = hook(home.path(), project.path(), agent, event, &payload(file, project.path()));
    // With no stored plan or cached result, the right answer is silence; anything printed must be
    // a hook answer the agent can parse.
    if !out.trim().is_empty() {
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], event, "{out}");
    }
}

/// Starts `refrain serve` on the project (the store's owner) and waits until its socket is up.
fn serve(home: &Path, project: &Path) -> std::process::Child {
    let child = refrain(home, project, &["serve"]).stderr(Stdio::null()).spawn().unwrap();
    let p = refrain::project::Project::at(project.canonicalize().unwrap(), home);
    let started = Instant::now();
    while !p.socket_path().exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "refrain serve never took the store");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[rstest]
#[case::compaction_before("PreCompact", "claude-PreCompact-1795311470987647626.json")]
#[case::compaction_after("PostCompact", "claude-PostCompact-1795311471304710281.json")]
fn compaction_hooks_note_the_event_in_the_project_store(#[case] event: &str, #[case] file: &str) {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut server = serve(home.path(), project.path());
    let (out, _) = hook(home.path(), project.path(), "claude", event, &payload(file, project.path()));
    assert_eq!(out, "");
    // The owner flushed the event before answering the hook; stop it to open the store here.
    server.kill().unwrap();
    server.wait().unwrap();
    let root = project.path().canonicalize().unwrap();
    let store = refrain::store::Store::open(&refrain::project::Project::at(root, home.path()).db_dir()).unwrap();
    let events = refrain::hooks::events::of_session(&store, "b7db804a-d194-4fe6-92d4-23ee27b67f10").unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event, event);
    assert_eq!(events[0].trigger.as_deref(), Some("manual"));
}

/// A hook never becomes the store's owner: with no `refrain serve` running it answers nothing,
/// within its time budget, and leaves no store behind.
#[test]
fn a_hook_without_a_server_never_opens_the_store() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (event, file) in [
        ("PreCompact", "claude-PreCompact-1795311470987647626.json"),
        ("UserPromptSubmit", "claude-UserPromptSubmit-1795311204932778601.json"),
        ("Stop", "claude-Stop-1795311205359547498.json"),
    ] {
        let (out, took) = hook(home.path(), project.path(), "claude", event, &payload(file, project.path()));
        assert_eq!(out, "", "{event}");
        assert!(took < Duration::from_secs(10), "{event} took {took:?}");
    }
    let p = refrain::project::Project::at(project.path().canonicalize().unwrap(), home.path());
    assert!(!p.db_dir().exists(), "a hook opened the store at {}", p.db_dir().display());
}

#[rstest]
#[case::empty("")]
#[case::not_json("this is not json")]
#[case::array("[1, 2, 3]")]
#[case::wrong_types("{\"prompt\": 42, \"cwd\": []}")]
#[case::truncated("{\"session_id\": \"x\", \"prompt\": \"add a fl")]
fn malformed_payloads_get_silence_and_exit_zero(#[case] stdin: &str) {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for event in ["UserPromptSubmit", "PostToolUse", "Stop"] {
        let (out, _) = hook(home.path(), project.path(), "claude", event, stdin.as_bytes());
        assert_eq!(out, "", "{event} answered a malformed payload");
    }
}
