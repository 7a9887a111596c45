//! `refrain doctor` against the real agents, offline: a fresh Claude Code install reports healthy
//! after one session (its hooks seen firing), a removed hook is reported with the command that
//! puts it back; a fresh Codex install reports its untrusted hooks (and agrees with Codex's own
//! app-server on which are trusted), and a missing model file is reported with its fix. Only the
//! first needs an agent session.

use super::clients::{Clients, opted_out};
use super::mock::{Api, Mock};
use super::*;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};

/// Runs the installed `refrain doctor ARGS` as the user would (the same data and model settings
/// as the install); returns its exit code and stdout.
fn doctor(s: &Scratch, models: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(s.home.join("bin/refrain"))
        .arg("doctor")
        .args(args)
        .current_dir(&s.project)
        .env_clear()
        .env("HOME", &s.home)
        .env("REFRAIN_HOME", &s.data)
        .env("REFRAIN_MODEL_DIR", models)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

/// The line of `text` that starts with `status` and holds `needle`, with the fix line after it.
fn line_with(text: &str, status: &str, needle: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with(status) && l.contains(needle))
        .unwrap_or_else(|| panic!("no `{status}` line with `{needle}` in:\n{text}"));
    let fix = lines.get(i + 1).filter(|l| l.trim_start().starts_with("fix: ")).copied().unwrap_or_default();
    format!("{}\n{fix}", lines[i])
}

#[test]
fn doctor_finds_claude_code_healthy_after_one_session_and_names_the_fix_for_a_removed_hook() {
    if opted_out("doctor_finds_claude_code_healthy_after_one_session_and_names_the_fix_for_a_removed_hook") {
        return;
    }
    let s = Scratch::new();
    s.install("claude");
    let models = crate::support::model_dir();
    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 0, "a fresh install has no problem:\n{text}");
    line_with(&text, "warn", "no hook of refrain's has fired yet in Claude Code");

    let script = json!({"steps": [{"name": "Read", "input": {"file_path": s.file(NOTES)}}], "final": "Read it."});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Anthropic, &tmp.path().join("s"), &script);
    super::claude::session(&s, &mock, "Read notes.txt");
    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.trim_end().ends_with("healthy"), "one session and nothing left to do:\n{text}");
    let fired = line_with(&text, "ok", "hooks fired:");
    for event in ["UserPromptSubmit", "PostToolUse", "Stop"] {
        assert!(fired.contains(&format!("{event} ")), "{event} was not seen firing: {fired}");
    }
    line_with(&text, "ok", "MCP server entry in");
    line_with(&text, "ok", "verifier model present and sha256-verified");

    // The user (or another tool) takes refrain's prompt hook out of Claude Code's settings.
    let settings = s.home.join(".claude/settings.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    doc["hooks"].as_object_mut().unwrap().shift_remove("UserPromptSubmit").unwrap();
    std::fs::write(&settings, doc.to_string()).unwrap();
    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 1, "{text}");
    let problem = line_with(&text, "problem", "settings.json: refrain's hooks missing");
    assert!(problem.contains("fix: refrain install --only claude"), "{problem}");
    let (_, json) = doctor(&s, &models, &["--json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["problems"], 1, "{json:#}");

    // The fix it names, run as named, puts the hook back.
    s.refrain(&["install", "--only", "claude"]);
    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 0, "the named fix did not fix it:\n{text}");
}

/// A model directory of links to the provisioned files (so one can go missing).
fn linked_models(dir: &Path) -> PathBuf {
    let src = crate::support::model_dir();
    let models = dir.join("models");
    let embed = models.join(refrain::embed::MODEL_NAME);
    std::fs::create_dir_all(&embed).unwrap();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let name = entry.file_name();
        if name != refrain::embed::MODEL_NAME {
            std::os::unix::fs::symlink(entry.path(), models.join(&name)).unwrap();
        }
    }
    for entry in std::fs::read_dir(src.join(refrain::embed::MODEL_NAME)).unwrap().flatten() {
        std::os::unix::fs::symlink(entry.path(), embed.join(entry.file_name())).unwrap();
    }
    models
}

/// Codex's own view of its hooks: `hooks/list` from `codex app-server`.
fn codex_hooks_list(s: &Scratch) -> Vec<Value> {
    let clients = Clients::get();
    let mut child = Command::new(clients.bin("codex"))
        .arg("app-server")
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", clients.path())
        .env("HOME", &s.home)
        .env("CODEX_HOME", s.home.join(".codex"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let cwd = s.project.to_string_lossy();
    for line in [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "refrain-test", "version": "1"}}}),
        json!({"method": "initialized"}),
        json!({"id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
            if v["id"] == 2 {
                let _ = tx.send(v);
                return;
            }
        }
    });
    let answer = rx.recv_timeout(Duration::from_secs(60));
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer.expect("codex app-server did not answer hooks/list within 60 s");
    answer["result"]["data"][0]["hooks"].as_array().cloned().unwrap_or_else(|| panic!("{answer}"))
}

#[test]
fn doctor_names_codexs_untrusted_hooks_as_codex_does_and_a_missing_model_with_their_fixes() {
    if opted_out("doctor_names_codexs_untrusted_hooks_as_codex_does_and_a_missing_model_with_their_fixes") {
        return;
    }
    let s = Scratch::new();
    let codex_home = s.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    // No plugin marketplace sync (it would reach github.com).
    std::fs::write(codex_home.join("config.toml"), "[features]\nplugins = false\n").unwrap();
    let models = linked_models(&s.data);
    s.install_with_models("codex", &models);

    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 1, "{text}");
    let problem = line_with(&text, "problem", "until you trust them");
    assert!(problem.contains("UserPromptSubmit") && problem.contains("Stop"), "{problem}");
    assert!(problem.contains("fix: codex, then choose \"Trust all and continue\""), "{problem}");
    let (_, json) = doctor(&s, &models, &["--json"]);
    assert_eq!(serde_json::from_str::<Value>(&json).unwrap()["problems"], 1, "{json}");

    // Codex agrees: refrain's hooks are untrusted. Trusting them as Codex records it (each
    // hook's key and the hash Codex computes) clears the problem.
    let hooks = codex_hooks_list(&s);
    let ours: Vec<&Value> =
        hooks.iter().filter(|h| h["command"].as_str().is_some_and(|c| c.contains(" hook codex "))).collect();
    assert_eq!(ours.len(), 5, "{hooks:#?}");
    assert!(ours.iter().all(|h| h["trustStatus"] == "untrusted"), "{hooks:#?}");
    let mut config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    for h in &ours {
        config.push_str(&format!("\n[hooks.state.{}]\ntrusted_hash = {}\n", h["key"], h["currentHash"]));
    }
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    assert!(
        codex_hooks_list(&s)
            .iter()
            .filter(|h| h["command"].as_str().is_some_and(|c| c.contains(" hook codex ")))
            .all(|h| h["trustStatus"] == "trusted")
    );
    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 0, "{text}");
    line_with(&text, "ok", "Codex trusts refrain's hooks");

    // The embedding model goes missing.
    std::fs::remove_file(models.join(refrain::embed::MODEL_NAME).join("model.onnx")).unwrap();
    let (code, text) = doctor(&s, &models, &[]);
    assert_eq!(code, 1, "{text}");
    let problem = line_with(&text, "problem", "model.onnx missing");
    assert!(
        problem.contains(&format!("fix: REFRAIN_MODEL_DIR={} ./install.sh --model-only", models.display())),
        "{problem}"
    );
    let (_, json) = doctor(&s, &models, &["--json"]);
    assert_eq!(serde_json::from_str::<Value>(&json).unwrap()["problems"], 1, "only the model: {json}");
}
