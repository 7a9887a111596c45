//! install.sh in a scratch HOME: dry run, install, a second install that changes nothing, and an
//! uninstall that puts every file back byte for byte. Uses the test build (`--no-build`) and the
//! provisioned model files (REFRAIN_MODEL_DIR), so it needs no network.

use rstest::rstest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const CLAUDE_JSON: &str =
    "{\n    \"numStartups\": 3,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"other-server\"}\n    }\n}\n";
const CLAUDE_SETTINGS: &str = "{\"model\": \"opus\", \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]}}";
const CODEX_TOML: &str = "# my codex config\nmodel = \"o3\"  # keep me\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
const GEMINI_SETTINGS: &str = "{\n  \"ui\": {\"theme\": \"GitHub\"},\n  \"hooks\": {\"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./notify.sh\"}]}]}\n}\n";
const OPENCODE_JSON: &str = "{\"$schema\": \"https://opencode.ai/config.json\", \"theme\": \"tokyonight\"}";
const CURSOR_HOOKS: &str = "{\"version\": 1, \"hooks\": {\"stop\": [{\"command\": \"./audit.sh\"}]}}\n";

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p)
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

struct Scratch {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("proj");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        for dir in [".gemini", ".qwen", ".config/opencode", ".cursor"] {
            std::fs::create_dir_all(home.join(dir)).unwrap();
        }
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(home.join(".gemini/settings.json"), GEMINI_SETTINGS).unwrap();
        std::fs::write(home.join(".config/opencode/opencode.json"), OPENCODE_JSON).unwrap();
        std::fs::write(home.join(".cursor/hooks.json"), CURSOR_HOOKS).unwrap();
        std::fs::write(home.join(".claude.json"), CLAUDE_JSON).unwrap();
        std::fs::write(home.join(".claude/settings.json"), CLAUDE_SETTINGS).unwrap();
        std::fs::write(home.join(".codex/config.toml"), CODEX_TOML).unwrap();
        std::fs::write(project.join(".mcp.json"), "{\"mcpServers\": {\"db\": {\"command\": \"db-mcp\"}}}\n").unwrap();
        Scratch { _tmp: tmp, home, project }
    }

    fn run(&self, args: &[&str]) -> String {
        self.run_in(args, "/usr/local/bin:/usr/bin:/bin", "/bin/bash")
    }

    /// `run` with this PATH and SHELL.
    fn run_in(&self, args: &[&str], path: &str, shell: &str) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
        let out = Command::new("bash")
            .arg(script)
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", path)
            .env("SHELL", shell)
            .env("HOME", &self.home)
            .env("REFRAIN_BIN_DIR", self.home.join("bin"))
            .env("REFRAIN_HOME", self.home.join("data"))
            .env("REFRAIN_MODEL_DIR", crate::support::model_dir())
            .env("REFRAIN_BINARY", env!("CARGO_BIN_EXE_refrain"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "install.sh {args:?} failed:\n{text}");
        text
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.home.join(rel)).unwrap_or_default()
    }
}

#[rstest]
#[case::user("user")]
#[case::project("project")]
fn install_sh_round_trip_leaves_every_file_as_it_was(#[case] scope: &str) {
    let s = Scratch::new();
    let all = |s: &Scratch| snapshot(s.home.parent().unwrap());
    let original = all(&s);

    let dry = s.run(&["--no-build", "--scope", scope, "--dry-run"]);
    assert!(dry.contains("would"), "{dry}");
    assert_eq!(all(&s), original, "a dry run changed files");

    let log = s.run(&["--no-build", "--scope", scope]);
    for next in ["Next:", "Trust all and continue", "refrain doctor", "refrain report"] {
        assert!(log.contains(next), "the install does not end with what to do next ({next}):\n{log}");
    }
    let installed = all(&s);
    assert!(s.home.join("bin/refrain").exists());
    if scope == "user" {
        let claude = s.read(".claude.json");
        assert!(
            claude.contains("\"refrain\"") && claude.contains("other-server") && claude.contains("numStartups"),
            "{claude}"
        );
        let settings = s.read(".claude/settings.json");
        assert!(
            settings.contains("hook claude UserPromptSubmit") && settings.contains("notify-send done"),
            "{settings}"
        );
        let codex = s.read(".codex/config.toml");
        assert!(codex.starts_with(CODEX_TOML), "comments and other servers must survive:\n{codex}");
        assert!(codex.contains("[mcp_servers.refrain]"));
        assert!(s.read(".codex/hooks.json").contains("hook codex Stop"));
        assert_eq!(s.read(".claude.json.refrain-backup"), CLAUDE_JSON);
        let gemini = s.read(".gemini/settings.json");
        for want in ["\"refrain\"", "hook gemini AfterTool", "hook gemini BeforeAgent", "./notify.sh", "GitHub"] {
            assert!(gemini.contains(want), "{want} missing:\n{gemini}");
        }
        assert!(gemini.contains("\"timeout\": 10000"), "Gemini CLI reads timeouts in milliseconds:\n{gemini}");
        let qwen = s.read(".qwen/settings.json");
        assert!(qwen.contains("hook qwen PostToolUse") && qwen.contains("\"mcpServers\""), "{qwen}");
        let opencode = s.read(".config/opencode/opencode.json");
        assert!(opencode.contains("\"mcp\"") && opencode.contains("tokyonight"), "{opencode}");
        let plugin = s.read(".config/opencode/plugin/refrain.js");
        assert!(plugin.starts_with("// refrain plugin for opencode") && plugin.contains("\"opencode\""), "{plugin}");
        let cursor = s.read(".cursor/hooks.json");
        assert!(cursor.contains("hook cursor postToolUse") && cursor.contains("./audit.sh"), "{cursor}");
    } else {
        let mcp = std::fs::read_to_string(s.project.join(".mcp.json")).unwrap();
        assert!(mcp.contains("\"refrain\"") && mcp.contains("db-mcp"), "{mcp}");
        assert!(s.project.join(".codex/config.toml").exists());
        for file in [
            ".gemini/settings.json",
            ".qwen/settings.json",
            "opencode.json",
            ".opencode/plugin/refrain.js",
            ".cursor/hooks.json",
        ] {
            assert!(s.project.join(file).exists(), "{file} was not written");
        }
        assert_eq!(s.read(".claude.json"), CLAUDE_JSON, "project scope must not touch user files");
        assert_eq!(s.read(".gemini/settings.json"), GEMINI_SETTINGS, "project scope must not touch user files");
    }

    let again = s.run(&["--no-build", "--scope", scope]);
    assert!(again.contains("nothing to change"), "{again}");
    assert_eq!(all(&s), installed, "a second install changed files");

    s.run(&["--uninstall", "--scope", scope]);
    assert_eq!(all(&s), original, "uninstall did not restore the original files");
}

#[test]
fn manifests_match_what_install_writes_into_an_empty_project() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_refrain"))
        .args([
            "install",
            "--scope",
            "project",
            "--only",
            "claude,codex,gemini,qwen,opencode,cursor",
            "--command",
            "refrain",
        ])
        .current_dir(&project)
        .env("HOME", tmp.path())
        .env_remove("REFRAIN_PROJECT")
        .env_remove("REFRAIN_HOME")
        .env_remove("REFRAIN_MODEL_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    for (written, kept) in [
        (".mcp.json", "claude/.mcp.json"),
        (".claude/settings.json", "claude/settings.json"),
        (".codex/config.toml", "codex/config.toml"),
        (".codex/hooks.json", "codex/hooks.json"),
        (".cursor/mcp.json", "cursor/mcp.json"),
        (".cursor/hooks.json", "cursor/hooks.json"),
        (".gemini/settings.json", "gemini/settings.json"),
        (".qwen/settings.json", "qwen/settings.json"),
        ("opencode.json", "opencode/opencode.json"),
        (".opencode/plugin/refrain.js", "opencode/plugin/refrain.js"),
    ] {
        let got = std::fs::read_to_string(project.join(written)).unwrap();
        let want = std::fs::read_to_string(manifests.join(kept)).unwrap();
        assert_eq!(got, want, "manifests/{kept} is out of date");
    }
}

/// A REFRAIN_HOME and REFRAIN_MODEL_DIR given to install.sh reach what the agents start: the
/// server entries carry them as env, the hook commands as flags, and a hook run with none of
/// them in its environment (as Codex runs it) reaches the server started from that registration
/// and lands in that data home.
#[test]
fn a_custom_data_home_and_model_dir_travel_in_the_registration() {
    let s = Scratch::new();
    s.run(&["--no-build"]);
    let (data, models) = (s.home.join("data"), crate::support::model_dir());
    let claude: serde_json::Value = serde_json::from_str(&s.read(".claude.json")).unwrap();
    let env = &claude["mcpServers"]["refrain"]["env"];
    assert_eq!(env["REFRAIN_HOME"], data.to_string_lossy().as_ref(), "{claude}");
    assert_eq!(env["REFRAIN_MODEL_DIR"], models.to_string_lossy().as_ref(), "{claude}");
    let codex = s.read(".codex/config.toml");
    assert!(codex.contains(&format!("REFRAIN_HOME = \"{}\"", data.display())), "{codex}");

    let settings: serde_json::Value = serde_json::from_str(&s.read(".claude/settings.json")).unwrap();
    let command = settings["hooks"]["PreCompact"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
    assert!(command.contains(&format!("--home {}", data.display())), "{command}");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks/claude-PreCompact-1795311470987647626.json");
    let mut payload: serde_json::Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    payload["cwd"] = s.project.to_string_lossy().into();
    // The agent starts the server from its registration (command, args, env) and nothing else;
    // a hook only ever follows that server.
    let entry = &claude["mcpServers"]["refrain"];
    let mut server = Command::new(entry["command"].as_str().unwrap());
    server.current_dir(&s.project).env_clear().env("PATH", "/usr/bin:/bin").env("HOME", &s.home);
    for arg in entry["args"].as_array().into_iter().flatten() {
        server.arg(arg.as_str().unwrap());
    }
    for (k, v) in env.as_object().unwrap() {
        server.env(k, v.as_str().unwrap());
    }
    let mut server = server
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let owned = refrain::project::Project::at(s.project.canonicalize().unwrap(), &data);
    let started = std::time::Instant::now();
    while !owned.socket_path().exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the registered server never took the store");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut child = Command::new("sh")
        .args(["-c", &command])
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &s.home)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    // The owner flushed the event before answering the hook; stop it to open the store here.
    server.kill().unwrap();
    server.wait().unwrap();
    let root = s.project.canonicalize().unwrap();
    let store = refrain::store::Store::open(&refrain::project::Project::at(root, &data).db_dir()).unwrap();
    let events = refrain::hooks::events::of_session(&store, "b7db804a-d194-4fe6-92d4-23ee27b67f10").unwrap();
    assert_eq!(events.len(), 1, "the hook did not write to the REFRAIN_HOME given at install time");
}

/// The verifier files install.sh provisions.
const VERIFIER_FILES: [&str; 5] =
    ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"];

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Runs a copy of install.sh that lives in `repo` (so its models/verifier/ is `repo`'s).
fn install_from(repo: &Path, models: &Path) -> (bool, String) {
    let out = Command::new("bash")
        .arg(repo.join("install.sh"))
        .arg("--model-only")
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", repo)
        .env("REFRAIN_MODEL_DIR", models)
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn install_provisions_the_verifier_checked_against_its_manifest_and_refuses_a_damaged_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, models) = (tmp.path().join("repo"), tmp.path().join("models"));
    std::fs::create_dir_all(repo.join("models/verifier")).unwrap();
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh"), repo.join("install.sh")).unwrap();
    // The embedding model is already provisioned (links), so nothing is downloaded.
    for name in ["ort", "all-MiniLM-L6-v2-int8"] {
        std::os::unix::fs::symlink(crate::support::model_dir().join(name), models.join(name)).unwrap();
    }
    let mut files = serde_json::Map::new();
    for name in VERIFIER_FILES {
        let body = format!("{name} v1");
        std::fs::write(repo.join("models/verifier").join(name), &body).unwrap();
        files.insert(name.into(), sha256(body.as_bytes()).into());
    }
    let manifest = serde_json::json!({"version": "v1", "files": files}).to_string();
    std::fs::write(repo.join("models/verifier/manifest.json"), manifest).unwrap();
    std::fs::write(repo.join("models/verifier/calibration.json"), "{\"version\": 1}").unwrap();

    let (ok, log) = install_from(&repo, &models);
    assert!(ok, "{log}");
    assert!(log.contains("verifier model installed and verified"), "{log}");
    for name in VERIFIER_FILES.iter().chain(&["manifest.json", "calibration.json"]) {
        let (a, b) =
            (std::fs::read(repo.join("models/verifier").join(name)), std::fs::read(models.join("verifier").join(name)));
        assert_eq!(a.unwrap(), b.unwrap(), "{name} was not provisioned as shipped");
    }
    let (ok, log) = install_from(&repo, &models);
    assert!(ok && log.contains("verifier model present and verified"), "a second run changes nothing: {log}");

    std::fs::write(repo.join("models/verifier/model.onnx"), "tampered").unwrap();
    let (ok, log) = install_from(&repo, &models);
    assert!(!ok, "a model that does not match its manifest must be refused: {log}");
    assert!(log.contains("model.onnx") && log.contains("does not match its manifest"), "{log}");
    assert_eq!(
        std::fs::read_to_string(models.join("verifier/model.onnx")).unwrap(),
        "model.onnx v1",
        "nothing installed"
    );
}

#[test]
fn the_shipped_verifier_model_matches_its_manifest_and_its_calibration() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/verifier");
    let calibration: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("calibration.json")).unwrap()).unwrap();
    let calibrated_for = calibration["verifier_sha256"].as_str();
    let Ok(manifest) = std::fs::read(dir.join("manifest.json")) else {
        // No model ships: then the calibration must not claim one (matching is plain cosine).
        assert_eq!(calibrated_for, None, "calibration.json names a verifier model that does not ship");
        return;
    };
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    for name in VERIFIER_FILES {
        let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("models/verifier/{name}: {e}"));
        assert_eq!(Some(sha256(&bytes).as_str()), manifest["files"][name].as_str(), "models/verifier/{name}");
    }
    // The calibration is the rule's (names no model: the model is loaded but not judged by) or
    // the shipped model's; never another model's.
    if let Some(sha) = calibrated_for {
        assert_eq!(Some(sha), manifest["files"]["model.onnx"].as_str(), "calibration.json was made for another model");
    }
}

/// A bin dir that is not on PATH gets the exact line that puts it there, for the user's shell; one
/// that is gets no such line.
#[rstest]
#[case::bash("/bin/bash", "echo 'export PATH=\"$HOME/bin:$PATH\"' >> $HOME/.bashrc")]
#[case::zsh("/usr/bin/zsh", "echo 'export PATH=\"$HOME/bin:$PATH\"' >> $HOME/.zshrc")]
#[case::fish("/usr/bin/fish", "fish_add_path \"$HOME/bin\"")]
#[case::other("/bin/ksh", "echo 'export PATH=\"$HOME/bin:$PATH\"' >> $HOME/.profile")]
fn install_sh_says_how_to_put_the_bin_dir_on_path_for_the_users_shell(#[case] shell: &str, #[case] line: &str) {
    let s = Scratch::new();
    let args = ["--no-build", "--only", "claude", "--dry-run"];
    let log = s.run_in(&args, "/usr/local/bin:/usr/bin:/bin", shell);
    assert!(log.contains("is not on your PATH") && log.contains(line), "{line} missing:\n{log}");
    let on_path = format!("{}:/usr/local/bin:/usr/bin:/bin", s.home.join("bin").display());
    let log = s.run_in(&args, &on_path, shell);
    assert!(!log.contains("is not on your PATH"), "{log}");
}

/// On a platform install.sh has no ONNX Runtime for, it stops before building or downloading
/// anything, naming the platform (`uname` is replaced on PATH to play it).
#[rstest]
#[case::intel_mac("Darwin", "x86_64", "macOS x86_64 is not supported")]
#[case::bsd("FreeBSD", "amd64", "FreeBSD amd64 is not supported")]
#[case::riscv("Linux", "riscv64", "Linux riscv64 is not supported")]
fn install_sh_stops_on_a_platform_it_has_no_runtime_for(#[case] os: &str, #[case] arch: &str, #[case] said: &str) {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let (fake, models) = (tmp.path().join("fake-bin"), tmp.path().join("models"));
    std::fs::create_dir_all(&fake).unwrap();
    let uname = format!("#!/bin/sh\ncase \"$1\" in -s) echo {os} ;; -m) echo {arch} ;; esac\n");
    std::fs::write(fake.join("uname"), uname).unwrap();
    std::fs::set_permissions(fake.join("uname"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh"))
        .arg("--model-only")
        .env_clear()
        .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", fake.display()))
        .env("HOME", tmp.path())
        .env("REFRAIN_MODEL_DIR", &models)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "install.sh went on for {os} {arch}:\n{log}");
    assert!(log.contains(said) && log.contains("Linux x86_64, Linux arm64 and macOS arm64"), "{log}");
    assert!(!models.exists(), "nothing may be provisioned on {os} {arch}");
}
