//! Hostile bytes over MCP against the real binary: for every tool, a malformed JSON line, every
//! argument given a value of the wrong type, an unknown field, a 50 MB string, 100,000-deep
//! nesting and invalid UTF-8. Each gets an answer (a JSON-RPC error or an `isError` result) with
//! its id; the server answers the next request, and what was stored before is still served.
//! The same kinds over HTTP where they apply.

use crate::http::server::{MCP_POST, Model, request};
use crate::support::Env;
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A raw stdio session: bytes in, JSON lines out.
struct Raw {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    async fn start(env: &Env) -> Raw {
        let mut cmd = env.cmd(&["serve", "--tools", "all"]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut raw = Raw { _child: child, stdin, lines };
        raw.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}"#).await;
        assert!(raw.recv().await["result"]["serverInfo"]["name"] == "refrain");
        raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        raw
    }

    async fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("an answer within 60 s")
            .unwrap()
            .expect("the server is still running");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }

    /// Sends one hostile line; asserts it is refused (error or isError) and the id, when the
    /// server could read one, is echoed.
    async fn refused(&mut self, line: &[u8], id: Option<u64>, what: &str) {
        self.send(line).await;
        let v = self.recv().await;
        let refused = v.get("error").is_some() || v["result"]["isError"] == true;
        assert!(refused, "{what}: not refused: {v}");
        if let Some(id) = id {
            assert!(v["id"] == id || v["id"].is_null(), "{what}: answered with the wrong id: {v}");
        }
    }

    async fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        let line =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}});
        self.send(line.to_string().as_bytes()).await;
        let v = self.recv().await;
        assert_eq!(v["id"], id, "{v}");
        v
    }
}

/// A value of another JSON type than the schema asks for.
fn wrong_type(schema: &Value) -> Value {
    let ty = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        Some(t) => t.as_str(),
        None => None,
    };
    match ty {
        Some("string") => json!(12345),
        Some("array") => json!({"not": "an array"}),
        Some("object") => json!([1, 2, 3]),
        Some("boolean") | Some("integer") | Some("number") => json!("not the right type"),
        _ => json!([[["nested", {"wrong": true}]]]),
    }
}

fn call_line(id: u64, tool: &str, args: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#)
        .into_bytes()
}

#[tokio::test]
async fn every_tool_refuses_hostile_input_and_the_server_loses_nothing() {
    let env = Env::without_model();
    let mut raw = Raw::start(&env).await;
    let put = json!({"tool": "Grep", "args": {"pattern": "kept"}, "result": "kept result"});
    assert_eq!(raw.call(1, "response_cache_put", put).await["result"]["structuredContent"]["stored"], true);
    raw.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    let tools = raw.recv().await["result"]["tools"].as_array().unwrap().clone();
    assert!(tools.len() >= 13, "every tool is listed with --tools all: {tools:?}");

    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = format!("\"{}\"", "x".repeat(50 << 20));
    let mut id = 100;
    let mut tried: std::collections::BTreeMap<&str, usize> = Default::default();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        id += 1;
        let mut truncated = call_line(id, name, r#"{"task": "add a fl"#);
        truncated.truncate(truncated.len() - 3);
        raw.refused(&truncated, None, &format!("{name}: malformed JSON")).await;
        *tried.entry("malformed JSON").or_default() += 1;

        let props = tool["inputSchema"]["properties"].as_object().cloned().unwrap_or_default();
        for (field, schema) in &props {
            id += 1;
            let args = json!({field: wrong_type(schema)});
            raw.refused(&call_line(id, name, &args.to_string()), Some(id), &format!("{name}.{field}: wrong type"))
                .await;
            *tried.entry("wrong type").or_default() += 1;
        }

        id += 1;
        let args = json!({"refrain_has_no_such_field": 1});
        raw.refused(&call_line(id, name, &args.to_string()), Some(id), &format!("{name}: unknown field")).await;
        *tried.entry("unknown field").or_default() += 1;

        id += 1;
        let field = props.keys().next().cloned().unwrap_or_else(|| "x".into());
        raw.refused(&call_line(id, name, &format!("{{\"{field}\": {huge}}}")), None, &format!("{name}: 50 MB")).await;
        *tried.entry("50 MB string").or_default() += 1;

        id += 1;
        raw.refused(&call_line(id, name, &format!("{{\"{field}\": {deep}}}")), None, &format!("{name}: deep")).await;
        *tried.entry("100k-deep nesting").or_default() += 1;

        id += 1;
        let mut bad = call_line(id, name, &format!("{{\"{field}\": \"ok then \u{1}\"}}"));
        let at = bad.iter().position(|&b| b == 1).unwrap();
        bad.splice(at..at + 1, [0xff, 0xfe, 0xc3]);
        raw.refused(&bad, None, &format!("{name}: invalid UTF-8")).await;
        *tried.entry("invalid UTF-8").or_default() += 1;

        id += 1;
        let stats = raw.call(id, "cache_stats", json!({})).await;
        assert!(
            stats["result"]["structuredContent"]["records"].is_object(),
            "{name}: the server stopped answering: {stats}"
        );
    }
    // Arrays of anything are legal JSON for `messages`; what is not a message is named.
    id += 1;
    let v = raw.call(id, "compact_preview", json!({"messages": [[["nested", {"wrong": true}]]]})).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v["result"]["content"][0]["text"].as_str().unwrap().contains("messages[0] is not a message"), "{v}");
    id += 1;
    let got = raw.call(id, "response_cache_get", json!({"tool": "Grep", "args": {"pattern": "kept"}})).await;
    assert_eq!(got["result"]["structuredContent"]["status"], "hit", "{got}");
    eprintln!("hostile inputs over stdio, by kind: {tried:?}");
}

#[test]
fn hostile_http_bodies_are_refused_and_the_server_goes_on() {
    let server = crate::http::server::Server::start("127.0.0.1:0", &[], &[], Model::None);
    let init = crate::http::server::initialize(1);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let mut bad_utf8 = init.clone().into_bytes();
    bad_utf8.splice(10..10, [0xff, 0xfe]);
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("malformed JSON", init.as_bytes()[..init.len() - 5].to_vec()),
        ("100k-deep nesting", deep.into_bytes()),
        ("invalid UTF-8", bad_utf8),
        ("wrong JSON-RPC shape", br#"{"jsonrpc":"2.0","id":[1],"method":{"x":1}}"#.to_vec()),
    ];
    for (what, body) in bodies {
        let reply = request(&server.addr, "POST", "/mcp", MCP_POST, &body, false);
        assert!((400..500).contains(&reply.status) || reply.text.contains("\"error\""), "{what}: {}", reply.text);
        let ok = request(&server.addr, "POST", "/mcp", MCP_POST, init.as_bytes(), false);
        assert_eq!(ok.status, 200, "after {what} the server stopped answering: {}", ok.text);
    }
}
