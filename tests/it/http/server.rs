//! Helpers for the HTTP tests: the real binary serving HTTP on a free loopback port, plain HTTP/1.1
//! requests over a socket (so tests can send any Host, Origin or framing), and an SSE reader.

use futures::{Stream, StreamExt};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Installs rustls' ring provider once: reqwest is built without a default one (no TLS is used,
/// but building a client requires a provider).
pub fn crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The provisioned embedding model and ONNX runtime.
pub fn model_dir() -> PathBuf {
    crate::support::model_dir()
}

/// Which model directory a server gets.
pub enum Model {
    /// The provisioned model.
    Real,
    /// An empty directory: no model (HTTP checks do not need one, and start faster without).
    None,
}

/// `refrain serve --http` on a temp project and home, killed on drop.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`, whatever address it was bound to.
    pub addr: String,
    /// The project served.
    pub project: tempfile::TempDir,
    _home: tempfile::TempDir,
    _models: Option<tempfile::TempDir>,
    log: Arc<Mutex<String>>,
}

/// A `refrain` command on a fresh temp project and home.
pub fn command(model: &Model) -> (Command, tempfile::TempDir, tempfile::TempDir, Option<tempfile::TempDir>) {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (models, empty) = match model {
        Model::Real => (model_dir(), None),
        Model::None => {
            let d = tempfile::tempdir().unwrap();
            (d.path().to_path_buf(), Some(d))
        }
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_refrain"));
    cmd.arg("--project").arg(project.path());
    cmd.env("REFRAIN_HOME", home.path()).env("REFRAIN_MODEL_DIR", &models);
    cmd.env_remove("REFRAIN_TOKEN").env_remove("REFRAIN_PROJECT").env("REFRAIN_LOG", "info");
    (cmd, project, home, empty)
}

impl Server {
    /// Starts `serve --http BIND` with extra serve args and env, and waits until it listens.
    pub fn start(bind: &str, args: &[&str], envs: &[(&str, &str)], model: Model) -> Server {
        Self::start_in(bind, args, envs, model, None)
    }

    /// Like `start`, with `refrain.toml` written into the project first.
    pub fn start_in(
        bind: &str,
        args: &[&str],
        envs: &[(&str, &str)],
        model: Model,
        project_toml: Option<&str>,
    ) -> Server {
        let (mut cmd, project, home, models) = command(&model);
        if let Some(text) = project_toml {
            std::fs::write(project.path().join("refrain.toml"), text).unwrap();
        }
        cmd.args(["serve", "--http", bind]).args(args).envs(envs.iter().copied());
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(port) = line
                    .split("/mcp")
                    .next()
                    .and_then(|s| s.rsplit(':').next())
                    .filter(|_| line.contains("listening on http://"))
                {
                    let _ = tx.send(port.to_string());
                }
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("server did not announce its address; stderr:\n{}", log.lock().unwrap()));
        Server { child, addr: format!("127.0.0.1:{port}"), project, _home: home, _models: models, log }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The canonical project root, as `cache_stats` reports it.
    pub fn project_root(&self) -> String {
        self.project.path().canonicalize().unwrap().display().to_string()
    }

    /// Sends SIGTERM and waits for the exit (at most `within`).
    pub fn terminate(&mut self, within: Duration) -> Option<ExitStatus> {
        Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a command to its exit (at most 20 s) and returns its status and stderr.
pub fn run_to_exit(mut cmd: Command) -> (ExitStatus, String) {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("command did not exit within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap(), err)
}

/// An HTTP response read off the socket.
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Head and body as text.
    pub text: String,
}

/// Sends one HTTP/1.1 request with `Connection: close` (a `Host` for `addr` unless `headers` has
/// one) and reads the whole response. `chunked` sends the body without a length.
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8], chunked: bool) -> Reply {
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let mut bytes = Vec::new();
    if chunked {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        bytes.extend_from_slice(head.as_bytes());
        for chunk in body.chunks(1024) {
            bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
    } else {
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        bytes.extend_from_slice(head.as_bytes());
        bytes.extend_from_slice(body);
    }
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    // The server may answer (and close) before reading a refused body; that is fine.
    let _ = stream.write_all(&bytes);
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    Reply { status, text }
}

/// The headers a streamable HTTP client sends with a JSON-RPC POST.
pub const MCP_POST: &[(&str, &str)] =
    &[("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

/// A JSON-RPC `initialize` request.
pub fn initialize(id: u64) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "refrain-tests", "version": "0"}}})
    .to_string()
}

/// Reads named events off an SSE response body.
pub struct SseReader<S> {
    body: S,
    buf: String,
}

impl<S: Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin> SseReader<S> {
    /// A reader over a response's byte stream.
    pub fn new(body: S) -> Self {
        SseReader { body, buf: String::new() }
    }

    /// The next event that carries data, as (event name, data); keep-alives are skipped.
    pub async fn next(&mut self) -> (String, String) {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
                    }
                }
                if !data.is_empty() {
                    return (name, data.join("\n"));
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(15), self.body.next())
                .await
                .expect("no SSE event within 15 s");
            let chunk = chunk.expect("SSE stream ended").unwrap();
            self.buf.push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

/// The JSON of a `message` event answering request `id`, skipping other messages.
pub async fn answer<S: Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin>(
    events: &mut SseReader<S>,
    id: u64,
) -> serde_json::Value {
    loop {
        let (name, data) = events.next().await;
        assert_eq!(name, "message", "unexpected event {name}: {data}");
        let value: serde_json::Value = serde_json::from_str(&data).unwrap();
        if value["id"] == id {
            return value;
        }
    }
}
