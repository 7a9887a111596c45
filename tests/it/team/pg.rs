//! A real PostgreSQL server for the team library tests: Debian's package (installed on first use
//! by tests/team/provision.sh), a cluster made by initdb in a temporary directory with a password
//! for the test role, listening on a loopback port. Started and stopped here, killed with SIGKILL
//! and restarted on the same data for fault tests. Run as the package's `postgres` user when the
//! tests run as root (postgres refuses root).

use crate::support::repo;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The role's password; members read it from the env var their config names.
pub const PASSWORD: &str = "team-library-test-password";
/// The env var the members' config names.
pub const PASSWORD_ENV: &str = "REFRAIN_TEST_TEAM_PASSWORD";

/// The server binaries' directory (the newest version installed).
fn bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let find = || {
            let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path().join("bin"))
                .filter(|b| b.join("initdb").exists())
                .collect();
            dirs.sort_by_key(|d| d.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0));
            dirs.pop()
        };
        if let Some(d) = find() {
            return d;
        }
        let status =
            Command::new("bash").arg(repo().join("tests/team/provision.sh")).status().expect("run provision.sh");
        assert!(status.success(), "tests/team/provision.sh failed: the team tests need Debian's postgresql");
        find().expect("initdb after provisioning")
    })
    .clone()
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A command run as the `postgres` user when we are root.
fn as_server_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// A running PostgreSQL cluster of its own.
pub struct Pg {
    dir: tempfile::TempDir,
    child: Option<Child>,
    /// Its loopback port.
    pub port: u16,
}

impl Pg {
    /// initdb into a fresh directory and start the server.
    pub fn start() -> Pg {
        let dir = tempfile::Builder::new().prefix("refrain-pg").tempdir().expect("pg dir");
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if is_root() {
            let ok = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(ok.success());
        }
        let out = as_server_user(&bin_dir().join("initdb"))
            .arg("-D")
            .arg(dir.path().join("data"))
            .args(["-U", "refrain", "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut pg = Pg { dir, child: None, port };
        pg.run();
        pg
    }

    /// The URL members connect with (the password comes from `PASSWORD_ENV`).
    pub fn url(&self) -> String {
        format!("postgres://refrain@127.0.0.1:{}/postgres", self.port)
    }

    fn run(&mut self) {
        let started = Instant::now();
        loop {
            let child = as_server_user(&bin_dir().join("postgres"))
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .arg("-p")
                .arg(self.port.to_string())
                .arg("-k")
                .arg(self.dir.path())
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=60"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start postgres");
            self.child = Some(child);
            while started.elapsed() < Duration::from_secs(60) {
                if self.ready() {
                    return;
                }
                if let Some(Ok(Some(_))) = self.child.as_mut().map(Child::try_wait) {
                    break; // exited (the killed server's backends still held its memory): try again
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            assert!(started.elapsed() < Duration::from_secs(60), "postgres did not start within 60 s");
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn ready(&self) -> bool {
        Command::new(bin_dir().join("pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Kills the server with SIGKILL (as a crash or a pulled cable would end it).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same data and port.
    pub fn restart(&mut self) {
        self.kill();
        self.run();
    }

    /// A client for assertions (the tests' own view of the database).
    pub async fn client(&self) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user("refrain")
            .password(PASSWORD)
            .dbname("postgres")
            .connect(tokio_postgres::NoTls)
            .await
            .expect("connect to the test server");
        tokio::spawn(conn);
        client
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SIGINT (fast shutdown): SIGTERM would wait for the members' connections to end.
            let _ = Command::new("kill").arg("-INT").arg(c.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
