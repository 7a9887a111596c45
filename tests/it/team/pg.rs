//! A real PostgreSQL server for the team library tests: Debian's package (installed on first use
//! by tests/team/provision.sh), a cluster made by initdb in a temporary directory with a password
//! for the test role, listening on a loopback port. Started and stopped here, killed with SIGKILL
//! and restarted on the same data for fault tests. Run as the package's `postgres` user when the
//! tests run as root (postgres refuses root).
//!
//! `Pg::start_pgvector` starts a second kind of server, one with the pgvector extension (Debian
//! bookworm has no pgvector package): PostgreSQL 16 with pgvector from the `pgserver` wheel on
//! PyPI, unpacked by `tests/team/provision.sh --pgvector` under the test target's tmp dir.

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

/// The pgvector server's binaries (unpacked on first use).
fn pgvector_bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pgvector-server");
        let status = Command::new("bash")
            .arg(repo().join("tests/team/provision.sh"))
            .arg("--pgvector")
            .arg(&dir)
            .status()
            .expect("run provision.sh --pgvector");
        assert!(status.success(), "tests/team/provision.sh --pgvector failed: the search test needs pgvector's server");
        dir.join("pgserver/pginstall/bin")
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
    /// TLS only (`hostssl` in pg_hba.conf), with a certificate from a CA of the test's own.
    tls: bool,
    /// The server's binaries.
    bin: PathBuf,
}

impl Pg {
    /// initdb into a fresh directory and start the server.
    pub fn start() -> Pg {
        Pg::init(false, bin_dir())
    }

    /// initdb and start a server that has the pgvector extension.
    pub fn start_pgvector() -> Pg {
        Pg::init(false, pgvector_bin_dir())
    }

    /// A server that accepts TLS connections only, its certificate (for 127.0.0.1) signed by a
    /// CA made here: `ca_file()`.
    pub fn start_tls() -> Pg {
        Pg::init(true, bin_dir())
    }

    /// The PEM of the CA that signed a TLS server's certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn init(tls: bool, bin: PathBuf) -> Pg {
        let dir = tempfile::Builder::new().prefix("refrain-pg").tempdir().expect("pg dir");
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if is_root() {
            let ok = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(ok.success());
        }
        let out = as_server_user(&bin.join("initdb"))
            .arg("-D")
            .arg(dir.path().join("data"))
            .args(["-U", "refrain", "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        if tls {
            certificates(dir.path());
            std::fs::write(
                dir.path().join("data/pg_hba.conf"),
                "hostssl all all 127.0.0.1/32 scram-sha-256\nlocal all all scram-sha-256\n",
            )
            .unwrap();
            if is_root() {
                let ok = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
                assert!(ok.success());
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut pg = Pg { dir, child: None, port, tls, bin };
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
            let child = as_server_user(&self.bin.join("postgres"))
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .arg("-p")
                .arg(self.port.to_string())
                .arg("-k")
                .arg(self.dir.path())
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=60"])
                .args(if self.tls {
                    vec![
                        "-c".to_string(),
                        "ssl=on".to_string(),
                        "-c".to_string(),
                        format!("ssl_cert_file={}", self.dir.path().join("server.crt").display()),
                        "-c".to_string(),
                        format!("ssl_key_file={}", self.dir.path().join("server.key").display()),
                    ]
                } else {
                    Vec::new()
                })
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
        Command::new(self.bin.join("pg_isready"))
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

/// A CA and a server certificate for 127.0.0.1 it signed, with openssl (in `dir`).
fn certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").current_dir(dir).args(args).output().expect("run openssl");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").unwrap();
    openssl(
        &["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2"]
            .into_iter()
            .chain(["-subj", "/CN=refrain test CA", "-addext", "basicConstraints=critical,CA:TRUE"])
            .chain(["-addext", "keyUsage=critical,keyCertSign,cRLSign"])
            .collect::<Vec<_>>(),
    );
    openssl(
        &["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr"]
            .into_iter()
            .chain(["-subj", "/CN=127.0.0.1"])
            .collect::<Vec<_>>(),
    );
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("server.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
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
