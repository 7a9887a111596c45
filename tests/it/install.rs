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
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(home.join(".claude.json"), CLAUDE_JSON).unwrap();
        std::fs::write(home.join(".claude/settings.json"), CLAUDE_SETTINGS).unwrap();
        std::fs::write(home.join(".codex/config.toml"), CODEX_TOML).unwrap();
        std::fs::write(project.join(".mcp.json"), "{\"mcpServers\": {\"db\": {\"command\": \"db-mcp\"}}}\n").unwrap();
        Scratch { _tmp: tmp, home, project }
    }

    fn run(&self, args: &[&str]) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
        let out = Command::new("bash")
            .arg(script)
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
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

    s.run(&["--no-build", "--scope", scope]);
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
    } else {
        let mcp = std::fs::read_to_string(s.project.join(".mcp.json")).unwrap();
        assert!(mcp.contains("\"refrain\"") && mcp.contains("db-mcp"), "{mcp}");
        assert!(s.project.join(".codex/config.toml").exists());
        assert_eq!(s.read(".claude.json"), CLAUDE_JSON, "project scope must not touch user files");
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
        .args(["install", "--scope", "project", "--only", "claude,codex,cursor", "--command", "refrain"])
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
