//! The dashboard page in a real headless Chromium (Debian's package, provisioned by
//! tests/browser/provision.sh), driven over the DevTools protocol: the page loads from
//! `refrain dashboard` without console errors, every chart is an SVG with bars, and every
//! number on the page equals `refrain report --json`'s. A screenshot is kept under target/.
//!
//! The protocol client is tungstenite (a small, well-kept synchronous websocket crate, handshake
//! only, no TLS): the DevTools endpoint is a plain ws:// socket on loopback, and a blocking client
//! in a blocking task keeps the driver to a few dozen lines, without Node or Playwright.

use crate::report::{CLAUDE, CODEX, History, dashboard};
use crate::support::repo;
use serde_json::{Value, json};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The browser binary, installed on first use like the model and the agent clients.
fn chromium() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = PathBuf::from("/usr/bin/chromium");
        if !bin.exists() {
            let status = std::process::Command::new("bash")
                .arg(repo().join("tests/browser/provision.sh"))
                .status()
                .expect("run tests/browser/provision.sh");
            assert!(status.success(), "tests/browser/provision.sh failed: the dashboard test needs Debian's chromium");
        }
        bin
    })
    .clone()
}

/// A headless Chromium with a fresh profile, killed on drop.
struct Browser {
    child: std::process::Child,
    _profile: tempfile::TempDir,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
    events: Vec<Value>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chromium writes the port it picked and the browser's endpoint into the profile.
        let port_file = profile.path().join("DevToolsActivePort");
        let started = Instant::now();
        let text = loop {
            if let Ok(t) = std::fs::read_to_string(&port_file)
                && t.lines().count() >= 2
            {
                break t;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "chromium did not open its DevTools port");
            std::thread::sleep(Duration::from_millis(100));
        };
        let mut lines = text.lines();
        let (port, path) = (lines.next().unwrap().trim(), lines.next().unwrap().trim());
        let (ws, _) = tungstenite::connect(format!("ws://127.0.0.1:{port}{path}")).expect("DevTools websocket");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        }
        Browser { child, _profile: profile, ws, next: 0, events: Vec::new() }
    }

    /// Sends a command (to a page session when `session` is given) and waits for its answer,
    /// keeping the events that arrive meanwhile.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let v = self.read();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.ws.read().expect("DevTools message") {
                Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
                Message::Binary(b) => return serde_json::from_slice(&b).unwrap(),
                _ => continue,
            }
        }
    }

    /// Waits until an event with this method has arrived.
    fn wait_event(&mut self, method: &str) {
        let started = Instant::now();
        while !self.events.iter().any(|e| e["method"] == method) {
            assert!(started.elapsed() < Duration::from_secs(60), "no {method} event");
            let v = self.read();
            self.events.push(v);
        }
    }

    /// Console errors, uncaught exceptions and error log entries seen so far.
    fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                e["method"] == "Runtime.exceptionThrown"
                    || (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                    || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
            })
            .map(Value::to_string)
            .collect()
    }
}

/// A JSON path such as `totals.waste.breaks` in a report.
fn at<'a>(report: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(report, |v, k| &v[k])
}

fn usd(x: f64) -> String {
    if x > 0.0 && x < 0.01 { format!("${x:.4}") } else { format!("${x:.2}") }
}

fn screenshot_path() -> PathBuf {
    let dir = repo().join("target").join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("dashboard.png")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_page_in_chromium_shows_the_reports_numbers_and_charts_without_errors() {
    let h = History::new(&CLAUDE, &CODEX);
    let home = tempfile::tempdir().unwrap();
    let expected = h.json(home.path(), &["--no-stores"]).await;
    let (_dashboard, url) = dashboard(&h, home.path(), &["--no-stores"]).await;
    let shot = screenshot_path();
    let seen = tokio::task::spawn_blocking(move || look(&url, &shot)).await.unwrap();
    let (errors, page) = seen;
    assert!(errors.is_empty(), "console errors on the page: {errors:#?}");
    let charts: Vec<&str> = page["charts"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(charts, ["chart-tokens", "chart-waste", "chart-causes", "chart-files", "chart-hits"]);
    assert!(page["bars"].as_u64().unwrap() >= 4, "bars drawn: {}", page["bars"]);
    let metrics = page["metrics"].as_object().unwrap();
    assert!(metrics.len() >= 15, "{metrics:?}");
    for (path, shown) in metrics {
        let want = at(&expected, path);
        let value: f64 = shown["value"].as_str().unwrap().parse().unwrap();
        let text = shown["text"].as_str().unwrap();
        if let Some(n) = want.as_i64() {
            assert_eq!(value as i64, n, "{path}");
            assert_eq!(text.replace(',', ""), n.to_string(), "{path} as shown");
        } else {
            let x = want.as_f64().unwrap_or_else(|| panic!("{path} is not in --json"));
            assert!((value - x).abs() < 1e-9, "{path}: page {value}, json {x}");
            assert_eq!(text, usd(x), "{path} as shown");
        }
    }
    assert_eq!(at(&expected, "totals.waste.breaks"), 3);
    let png = std::fs::read(screenshot_path()).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "screenshot kept at {}", screenshot_path().display());
}

/// Loads the page, collects what it shows, and saves a screenshot.
fn look(url: &str, shot: &Path) -> (Vec<String>, Value) {
    let mut b = Browser::start();
    let target = b.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let attached = b.call(None, "Target.attachToTarget", json!({"targetId": target["targetId"], "flatten": true}));
    let session = attached["sessionId"].as_str().unwrap().to_string();
    let s = Some(session.as_str());
    for m in ["Runtime.enable", "Log.enable", "Page.enable"] {
        b.call(s, m, json!({}));
    }
    b.call(
        s,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1280, "height": 1600, "deviceScaleFactor": 1, "mobile": false}),
    );
    b.call(s, "Page.navigate", json!({"url": url}));
    b.wait_event("Page.loadEventFired");
    // Let the live page's first poll run: it must not error either.
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        b.call(s, "Runtime.evaluate", json!({"expression": "1"}));
        std::thread::sleep(Duration::from_millis(250));
    }
    let js = r#"JSON.stringify({
        charts: [...document.querySelectorAll('svg.chart')].map(s => s.id),
        bars: document.querySelectorAll('svg.chart rect.bar').length,
        metrics: Object.fromEntries([...document.querySelectorAll('[data-metric]')]
            .map(e => [e.dataset.metric, {value: e.dataset.value, text: e.textContent.trim()}]))
    })"#;
    let r = b.call(s, "Runtime.evaluate", json!({"expression": js, "returnByValue": true}));
    let page: Value = serde_json::from_str(r["result"]["value"].as_str().unwrap()).unwrap();
    let png = b.call(s, "Page.captureScreenshot", json!({"format": "png", "captureBeyondViewport": true}));
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(png["data"].as_str().unwrap()).unwrap();
    std::fs::write(shot, bytes).unwrap();
    (b.errors(), page)
}
