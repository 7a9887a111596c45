//! `refrain-bench replay` on real sessions from the committed corpus, against the real binary:
//! the re-reads refrain answers with an "unchanged" note must be exactly the byte-identical ones,
//! checked against a count made here without refrain's code. A re-read is byte-identical when
//! the Read tool returned, byte for byte, the text of the latest earlier Read of the same file and
//! range in the same conversation: on the entry's own branch of the transcript (its `parentUuid`
//! chain, which a rewind leaves and a compaction or a cleared tool output ends). Only re-reads too
//! short for any note to be shorter may go without one.

// Test helpers outside #[test] functions may fail loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{model_dir, refrain_bin};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The sessions the test replays: a main session with three identical re-reads in its own
/// conversation (one too short for a note) and its subagents' entries inline (reads the main
/// conversation never saw, some of the same files); and one that re-reads the same script twice
/// unchanged.
const SESSIONS: [&str; 2] = [
    "claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl.zst",
    "m-claude/e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl.zst",
];

/// Re-reads shorter than this may go without a note (a note names the file and the message it
/// was read at: it is no shorter than a few hundred bytes of text).
const NOTE_WORTHY_BYTES: usize = 1000;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sessions").join(name)
}

fn lines(path: &Path) -> Vec<Option<Value>> {
    let mut text = String::new();
    zstd::stream::read::Decoder::new(std::fs::File::open(path).unwrap()).unwrap().read_to_string(&mut text).unwrap();
    text.lines().map(|l| serde_json::from_str(l).ok()).collect()
}

/// One re-read: the file, its text's length, and whether it is byte-identical to the previous
/// read of the same file and range in its conversation.
#[derive(Debug)]
struct Reread {
    path: String,
    bytes: usize,
    identical: bool,
}

/// Every re-read of the Read tool in a Claude Code transcript, judged independently.
fn rereads(lines: &[Option<Value>]) -> Vec<Reread> {
    let uuid = |e: &Value| e.get("uuid").and_then(Value::as_str).map(str::to_string);
    let index: HashMap<String, usize> =
        lines.iter().enumerate().filter_map(|(i, e)| Some((uuid(e.as_ref()?)?, i))).collect();
    let mut calls: HashMap<String, Value> = HashMap::new();
    // line -> (file, offset, limit) and the text the Read returned there.
    let mut reads: HashMap<usize, ((String, String, String), String)> = HashMap::new();
    let mut out = Vec::new();
    for (i, e) in lines.iter().enumerate() {
        let Some(e) = e else { continue };
        let content = e.pointer("/message/content").and_then(Value::as_array).cloned().unwrap_or_default();
        for b in &content {
            if b["type"] == "tool_use" && b["name"] == "Read" {
                calls.insert(b["id"].as_str().unwrap_or_default().to_string(), b["input"].clone());
            }
        }
        let results: Vec<&Value> = content.iter().filter(|b| b["type"] == "tool_result").collect();
        let [result] = results.as_slice() else { continue };
        let Some(input) = calls.get(result["tool_use_id"].as_str().unwrap_or_default()) else { continue };
        let shown = &e["toolUseResult"];
        if result["is_error"] == true || shown["type"] != "text" {
            continue;
        }
        let Some(text) = shown.pointer("/file/content").and_then(Value::as_str) else { continue };
        let key = (input["file_path"].to_string(), input["offset"].to_string(), input["limit"].to_string());
        // The latest earlier read of the same key on this entry's branch.
        let mut at = e.get("parentUuid").and_then(Value::as_str).and_then(|p| index.get(p)).copied();
        while let Some(j) = at {
            let Some(parent) = &lines[j] else { break };
            if parent["type"] == "system" && parent["subtype"] == "microcompact_boundary" {
                break;
            }
            if let Some((k, before)) = reads.get(&j).filter(|(k, _)| *k == key) {
                let path = k.0.trim_matches('"').to_string();
                out.push(Reread { path, bytes: text.len(), identical: before == text });
                break;
            }
            at = parent.get("parentUuid").and_then(Value::as_str).and_then(|p| index.get(p)).copied();
        }
        reads.insert(i, (key, text.to_string()));
    }
    out
}

#[test]
fn the_rereads_replay_notes_as_unchanged_are_exactly_the_byte_identical_ones() {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_refrain-bench"));
    cmd.arg("--refrain").arg(refrain_bin()).arg("--model-dir").arg(model_dir()).args(["replay", "--json"]);
    cmd.args(SESSIONS.iter().map(|s| corpus(s)));
    let home = tempfile::tempdir().unwrap();
    let out = cmd.env("REFRAIN_HOME", home.path()).env_remove("REFRAIN_PROJECT").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "replay failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let mut checked = 0;
    for name in SESSIONS {
        let file = Path::new(name).file_name().unwrap().to_string_lossy().into_owned();
        let row = report["sessions"].as_array().unwrap().iter().find(|r| r["session"] == file.as_str());
        let row = row.unwrap_or_else(|| panic!("{file} was not replayed: {stdout}"));
        let rereads = rereads(&lines(&corpus(name)));
        let mut noted: BTreeMap<String, usize> = BTreeMap::new();
        for l in row["lines"].as_array().unwrap().iter().filter(|l| l["kind"] == "read_note") {
            // refrain names the file as an absolute path of this machine (a Windows session's
            // `C:/...` joined to its working directory): the path as the agent wrote it ends it.
            let subject = l["subject"].as_str().unwrap();
            let path = rereads.iter().map(|r| r.path.as_str()).find(|p| subject.ends_with(*p)).unwrap_or(subject);
            *noted.entry(path.to_string()).or_default() += 1;
        }
        let (mut identical, mut worthy): (BTreeMap<String, usize>, BTreeMap<String, usize>) = Default::default();
        for r in rereads.iter().filter(|r| r.identical) {
            *identical.entry(r.path.clone()).or_default() += 1;
            if r.bytes >= NOTE_WORTHY_BYTES {
                *worthy.entry(r.path.clone()).or_default() += 1;
            }
        }
        for (path, n) in &noted {
            let same = identical.get(path).copied().unwrap_or(0);
            assert!(*n <= same, "{file}: {n} notes on {path}, but only {same} byte-identical re-reads: {rereads:?}");
        }
        for (path, n) in &worthy {
            let got = noted.get(path).copied().unwrap_or(0);
            assert!(got >= *n, "{file}: {n} byte-identical re-reads of {path} worth a note, {got} noted: {rereads:?}");
        }
        assert_eq!(row["notes"].as_u64(), Some(noted.values().sum::<usize>() as u64), "{row}");
        checked += worthy.values().sum::<usize>();
    }
    // The sessions hold note-worthy identical re-reads: the check above has something to find.
    assert!(checked >= 3, "only {checked} note-worthy identical re-reads in the test sessions");
    assert!(report["total"]["requests"].as_u64().unwrap() > report["total"]["tool_calls"].as_u64().unwrap());
    assert!(report["total"]["fixed"].as_u64().unwrap() > 0);
}

/// `refrain report` judges a re-read as the hook does, by the text the tool returned: on the same
/// sessions, the re-reads it counts as unchanged are exactly the byte-identical ones counted here
/// (a subagent's edit, a growing file or a write to another file in between change nothing).
#[test]
fn the_rereads_report_counts_as_unchanged_are_exactly_the_byte_identical_ones() {
    let history = tempfile::tempdir().unwrap();
    let dir = history.path().join("projects/-corpus");
    std::fs::create_dir_all(&dir).unwrap();
    let mut identical = 0;
    for name in SESSIONS {
        let lines = lines(&corpus(name));
        identical += rereads(&lines).iter().filter(|r| r.identical).count();
        let text: Vec<String> = lines.iter().map(|l| l.as_ref().map(Value::to_string).unwrap_or_default()).collect();
        let file = Path::new(name).file_name().unwrap().to_string_lossy().trim_end_matches(".zst").to_string();
        std::fs::write(dir.join(file), text.join("\n")).unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(refrain_bin())
        .args(["report", "--json", "--no-stores", "--claude-dir"])
        .arg(history.path())
        .arg("--codex-home")
        .arg(home.path().join("none"))
        .env("REFRAIN_HOME", home.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let counted = report["totals"]["waste"]["repeated_reads"].as_u64().unwrap();
    assert!(identical >= 3, "the sessions hold byte-identical re-reads to find: {identical}");
    assert_eq!(counted, identical as u64, "report: {}", report["repeated_files"]);
}
