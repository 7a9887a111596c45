//! The HTTP transports of the real binary: streamable HTTP at `/mcp` (driven by rmcp's client),
//! the legacy SSE transport at `/sse` (driven by hand, the way Cursor and Claude Code's `-t sse`
//! speak it), and the guard in front of both: Host, Origin, bearer token, body size, and refusing
//! a non-loopback bind without a token.

pub mod server;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rstest::rstest;
use serde_json::json;
use server::{MCP_POST, Model, Server, SseReader, answer, initialize, request, run_to_exit};
use std::time::Duration;

#[tokio::test]
async fn streamable_http_initializes_lists_tools_and_calls_cache_stats() {
    server::crypto();
    let server = Server::start("127.0.0.1:0", &[], &[], Model::Real);
    let client = ().serve(StreamableHttpClientTransport::from_uri(server.url("/mcp"))).await.unwrap();
    let info = client.peer_info().unwrap();
    let server_info = info.server_info.as_ref().unwrap();
    assert_eq!(server_info.name, "refrain");
    assert_eq!(server_info.version, env!("CARGO_PKG_VERSION"));
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "plan_lookup"), "{tools:?}");
    assert!(!tools.iter().any(|t| t.name == "cache_stats"), "cache_stats is not listed by default: {tools:?}");
    // Unlisted tools stay callable by name (the hooks and the CLI call them so).
    let result = client.call_tool(CallToolRequestParams::new("cache_stats")).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let stats = result.structured_content.unwrap();
    assert_eq!(stats["project"], server.project_root());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn sse_session_round_trip_and_bad_posts() {
    server::crypto();
    let server = Server::start("127.0.0.1:0", &[], &[("REFRAIN__SERVER__MAX_MESSAGE_BYTES", "4096")], Model::Real);
    server::crypto();
    let http = reqwest::Client::new();
    let stream = http.get(server.url("/sse")).header("Accept", "text/event-stream").send().await.unwrap();
    assert_eq!(stream.status(), 200);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let mut events = SseReader::new(stream.bytes_stream());
    let (name, endpoint) = events.next().await;
    assert_eq!(name, "endpoint");
    assert!(endpoint.starts_with("/message?sessionId="), "{endpoint}");
    let post =
        |body: String| http.post(server.url(&endpoint)).header("Content-Type", "application/json").body(body).send();

    assert_eq!(post(initialize(1)).await.unwrap().status(), 202);
    let init = answer(&mut events, 1).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "refrain", "{init}");
    assert!(init["result"].get("instructions").is_none(), "no instructions by default: {init}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(post(initialized).await.unwrap().status(), 202);

    assert_eq!(
        post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()).await.unwrap().status(),
        202
    );
    let tools = answer(&mut events, 2).await;
    assert!(tools["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "plan_lookup"), "{tools}");

    // Bad posts are refused with a reason and leave the session working.
    let malformed = post("{not json".into()).await.unwrap();
    assert_eq!(malformed.status(), 400);
    assert!(malformed.text().await.unwrap().contains("not one JSON-RPC 2.0 message"));
    let addr = server.addr.clone();
    let oversized = tokio::task::spawn_blocking({
        let path = endpoint.clone();
        move || request(&addr, "POST", &path, &[("Content-Type", "application/json")], &[b' '; 8192], true)
    });
    let oversized = oversized.await.unwrap();
    assert_eq!(oversized.status, 413, "{}", oversized.text);
    assert!(oversized.text.contains("exceeds the limit of 4096 bytes"), "{}", oversized.text);
    let unknown = http.post(server.url("/message?sessionId=nope")).body(initialize(9)).send().await.unwrap();
    assert_eq!(unknown.status(), 404);

    let call =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "cache_stats", "arguments": {}}});
    assert_eq!(post(call.to_string()).await.unwrap().status(), 202);
    let stats = answer(&mut events, 3).await;
    assert_eq!(stats["result"]["structuredContent"]["project"], server.project_root(), "{stats}");

    // Closing the stream ends the session.
    drop(events);
    let mut gone = false;
    for _ in 0..100 {
        if post(initialize(4)).await.unwrap().status() == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the session outlived its stream");
}

#[rstest]
#[case::foreign_origin_on_mcp("POST", "/mcp", ("Origin", "https://evil.example"), "Origin")]
#[case::foreign_origin_on_sse("GET", "/sse", ("Origin", "http://evil.example:8080"), "Origin")]
#[case::null_origin_on_message("POST", "/message?sessionId=x", ("Origin", "null"), "Origin")]
#[case::foreign_host_on_mcp("POST", "/mcp", ("Host", "evil.example"), "Host")]
#[case::rebound_host_on_sse("GET", "/sse", ("Host", "attacker.test:80"), "Host")]
#[case::foreign_ip_host_on_message("POST", "/message?sessionId=x", ("Host", "203.0.113.9"), "Host")]
fn foreign_origin_or_host_is_forbidden(
    #[case] method: &str,
    #[case] path: &str,
    #[case] header: (&str, &str),
    #[case] named: &str,
) {
    let server = Server::start("127.0.0.1:0", &[], &[], Model::None);
    let headers = [MCP_POST[0], MCP_POST[1], header];
    let reply = request(&server.addr, method, path, &headers, initialize(1).as_bytes(), false);
    assert_eq!(reply.status, 403, "{}", reply.text);
    assert!(
        reply.text.contains(&format!("forbidden: {named}")) && reply.text.contains("DNS-rebinding"),
        "{}",
        reply.text
    );
}

#[rstest]
#[case::no_origin(None)]
#[case::loopback_origin(Some("http://localhost:6274"))]
#[case::ip_loopback_origin(Some("http://127.0.0.1:3000"))]
#[case::configured_origin(Some("https://app.example.com"))]
fn loopback_and_configured_origins_are_served(#[case] origin: Option<&str>) {
    let server = Server::start(
        "127.0.0.1:0",
        &[],
        &[("REFRAIN__SERVER__ALLOWED_ORIGINS", r#"["https://app.example.com"]"#)],
        Model::None,
    );
    let mut headers = MCP_POST.to_vec();
    headers.extend(origin.map(|o| ("Origin", o)));
    let reply = request(&server.addr, "POST", "/mcp", &headers, initialize(1).as_bytes(), false);
    assert_eq!(reply.status, 200, "{}\n{}", reply.text, server.log());
    assert!(reply.text.contains("\"name\":\"refrain\""), "{}", reply.text);
}

#[rstest]
#[case::missing(None, 401)]
#[case::wrong(Some("Bearer not-the-token"), 401)]
#[case::prefix_of_the_token(Some("Bearer s3cret-toke"), 401)]
#[case::token_plus_more(Some("Bearer s3cret-token2"), 401)]
#[case::empty_bearer(Some("Bearer "), 401)]
#[case::other_scheme(Some("Basic czNjcmV0LXRva2Vu"), 401)]
#[case::right(Some("Bearer s3cret-token"), 200)]
fn token_is_required_when_set(#[case] authorization: Option<&str>, #[case] status: u16) {
    // A non-loopback bind starts once a token is set.
    let server = Server::start("0.0.0.0:0", &["--token", "s3cret-token"], &[], Model::None);
    let mut headers = MCP_POST.to_vec();
    headers.extend(authorization.map(|a| ("Authorization", a)));
    let reply = request(&server.addr, "POST", "/mcp", &headers, initialize(1).as_bytes(), false);
    assert_eq!(reply.status, status, "{}", reply.text);
    if status == 401 {
        assert!(reply.text.contains("Authorization: Bearer <token>"), "{}", reply.text);
        let sse = request(&server.addr, "GET", "/sse", &headers[2..], b"", false);
        assert_eq!(sse.status, 401, "{}", sse.text);
    }
}

/// A project file that tries to open the HTTP server: every setting is refused, so foreign
/// origins and hosts stay forbidden and the repository's token does not count as the user's.
const HOSTILE_HTTP: &str = "[server]\nallowed_origins = [\"*\", \"https://evil.example\"]\nallowed_hosts = [\"evil.example\"]\ntoken = \"from-the-repository\"\n";

#[rstest]
#[case::star_origin(("Origin", "*"), 403)]
#[case::origin_the_project_allowed(("Origin", "https://evil.example"), 403)]
#[case::host_the_project_allowed(("Host", "evil.example"), 403)]
#[case::no_token_needed_for_loopback(("Accept-Language", "en"), 200)]
fn a_project_file_cannot_open_the_http_server(#[case] header: (&str, &str), #[case] status: u16) {
    let server = Server::start_in("127.0.0.1:0", &[], &[], Model::None, Some(HOSTILE_HTTP));
    let headers = [MCP_POST[0], MCP_POST[1], header];
    let reply = request(&server.addr, "POST", "/mcp", &headers, initialize(1).as_bytes(), false);
    assert_eq!(reply.status, status, "{}", reply.text);
    let log = server.log();
    assert!(log.contains("project setting refused") && log.contains("server.allowed_origins"), "{log}");
}

#[test]
fn a_project_token_does_not_permit_a_non_loopback_bind() {
    let (mut cmd, project, _home, _models) = server::command(&Model::None);
    std::fs::write(project.path().join("refrain.toml"), HOSTILE_HTTP).unwrap();
    cmd.args(["serve", "--http", "0.0.0.0:0"]);
    let (status, stderr) = run_to_exit(cmd);
    assert!(!status.success());
    assert!(stderr.contains("refusing to serve HTTP") && stderr.contains("--token"), "{stderr}");
}

#[rstest]
#[case::missing(None, 401)]
#[case::right(Some("Bearer loop-token"), 200)]
fn a_token_set_on_loopback_is_required_too(#[case] authorization: Option<&str>, #[case] status: u16) {
    let server = Server::start("127.0.0.1:0", &["--token", "loop-token"], &[], Model::None);
    let mut headers = MCP_POST.to_vec();
    headers.extend(authorization.map(|a| ("Authorization", a)));
    let reply = request(&server.addr, "POST", "/mcp", &headers, initialize(1).as_bytes(), false);
    assert_eq!(reply.status, status, "{}", reply.text);
}

#[rstest]
#[case::unspecified("0.0.0.0:0")]
#[case::ipv6_unspecified("[::]:0")]
fn non_loopback_bind_without_token_is_refused(#[case] bind: &str) {
    let (mut cmd, _project, _home, _models) = server::command(&Model::None);
    cmd.args(["serve", "--http", bind]);
    let (status, stderr) = run_to_exit(cmd);
    assert!(!status.success());
    assert!(stderr.contains("refusing to serve HTTP") && stderr.contains("--token"), "{stderr}");
}

#[rstest]
#[case::declared_length(false)]
#[case::chunked(true)]
fn oversized_body_on_mcp_is_refused(#[case] chunked: bool) {
    let server = Server::start("127.0.0.1:0", &[], &[("REFRAIN__SERVER__MAX_MESSAGE_BYTES", "4096")], Model::None);
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"pad": "x".repeat(8000)}}).to_string();
    let reply = request(&server.addr, "POST", "/mcp", MCP_POST, body.as_bytes(), chunked);
    assert_eq!(reply.status, 413, "{}", reply.text);
    if !chunked {
        assert!(reply.text.contains("exceeds the limit of 4096 bytes"), "{}", reply.text);
    }
    // A message within the limit still goes through.
    let ok = request(&server.addr, "POST", "/mcp", MCP_POST, initialize(2).as_bytes(), chunked);
    assert_eq!(ok.status, 200, "{}", ok.text);
}

#[tokio::test]
async fn sigterm_stops_the_server_with_a_stream_open() {
    server::crypto();
    let mut server = Server::start("127.0.0.1:0", &[], &[], Model::None);
    let stream = reqwest::Client::new().get(server.url("/sse")).send().await.unwrap();
    let mut events = SseReader::new(stream.bytes_stream());
    assert_eq!(events.next().await.0, "endpoint");
    let status = tokio::task::spawn_blocking(move || {
        let status = server.terminate(Duration::from_secs(10));
        (status, server.log())
    });
    let (status, log) = status.await.unwrap();
    let status = status.unwrap_or_else(|| panic!("still running 10 s after SIGTERM:\n{log}"));
    assert!(status.success(), "{status:?}\n{log}");
}
