//! MCP over stdio, with a framing layer in front of rmcp.
//!
//! The framing layer reads one JSON-RPC message per line, refuses lines over the size limit and
//! lines that are not JSON with a proper JSON-RPC error (rmcp alone would drop them silently), and
//! passes everything else to the handler. All output goes through one writer, a line at a time.

use super::Handler;
use rmcp::ServiceExt;
use serde::Deserialize as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Serves `handler` on a line-delimited byte stream until the input closes.
pub async fn serve<R, W>(reader: R, writer: W, handler: Handler, max_message_bytes: usize) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 20);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 20);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel::<String>();
    let writer_task = tokio::spawn(write_lines(from_rmcp, errors_rx, writer));
    let reader_task = tokio::spawn(read_lines(reader, to_rmcp, errors_tx, max_message_bytes));
    let service = handler.serve((rmcp_in, rmcp_out)).await.map_err(|e| std::io::Error::other(e.to_string()));
    match service {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::warn!(error = %e, "client closed before initializing"),
    }
    reader_task.abort();
    let _ = writer_task.await;
    Ok(())
}

async fn read_lines<R: AsyncRead + Unpin>(
    reader: R,
    mut to_rmcp: tokio::io::DuplexStream,
    errors: mpsc::UnboundedSender<String>,
    max: usize,
) {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let (n, too_long) = match read_limited_line(&mut reader, &mut buf, max).await {
            Ok(r) => r,
            Err(_) => break,
        };
        if n == 0 {
            break;
        }
        if too_long {
            let msg = format!(
                "message of {n} bytes exceeds the limit of {max} bytes; send smaller arguments or raise server.max_message_bytes"
            );
            let _ = errors.send(error_line(Value::Null, -32600, &msg));
            continue;
        }
        let line = trim_line(&buf);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match check(line) {
            Ok(()) => {
                if to_rmcp.write_all(line).await.is_err() || to_rmcp.write_all(b"\n").await.is_err() {
                    break;
                }
            }
            Err(reply) => {
                let _ = errors.send(reply);
            }
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// Reads one line of at most `max` bytes; longer lines are consumed and reported as too long.
async fn read_limited_line<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(usize, bool)> {
    let mut total = 0usize;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok((total, total > max));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if total + take <= max + 1 {
            buf.extend_from_slice(&chunk[..take]);
        }
        total += take;
        r.consume(take);
        if done {
            let body = if total > 0 { total - 1 } else { 0 };
            return Ok((total, body > max));
        }
    }
}

fn trim_line(buf: &[u8]) -> &[u8] {
    let mut end = buf.len();
    while end > 0 && (buf[end - 1] == b'\n' || buf[end - 1] == b'\r') {
        end -= 1;
    }
    &buf[..end]
}

/// Valid JSON-RPC passes; anything else gets the error reply to send back.
fn check(line: &[u8]) -> Result<(), String> {
    // The common case is read without building the message (params are skipped, not stored):
    // rmcp parses it again right after. Skipping checks neither depth nor UTF-8, so a message
    // nested deeper than a parse allows, or one that is not UTF-8, takes the full parse below,
    // which refuses it (rmcp must never see it: either stops its transport).
    if nesting(line) <= MAX_NESTING
        && std::str::from_utf8(line).is_ok()
        && let Ok(e) = serde_json::from_slice::<Envelope>(line)
    {
        return if e.valid() { Ok(()) } else { Err(invalid(e.id.unwrap_or(Value::Null))) };
    }
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        error_line(
            Value::Null,
            -32700,
            &format!("parse error: the message is not valid JSON ({e}); send one JSON-RPC object per line"),
        )
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let valid = value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && (value.get("method").is_some_and(Value::is_string)
            || value.get("result").is_some()
            || value.get("error").is_some());
    if valid { Ok(()) } else { Err(invalid(id)) }
}

/// Deepest nesting a message may have: serde_json's own parse limit.
const MAX_NESTING: usize = 128;

/// How deeply a JSON text nests arrays and objects (brackets inside strings do not count).
fn nesting(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in line {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The members of a JSON-RPC message the check looks at; the others are skipped unread.
#[derive(serde::Deserialize)]
struct Envelope {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

impl Envelope {
    fn valid(&self) -> bool {
        self.jsonrpc.as_ref().and_then(Value::as_str) == Some("2.0")
            && (self.method.as_ref().is_some_and(Value::is_string) || self.result || self.error)
    }
}

/// True for a member that is there, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

fn invalid(id: Value) -> String {
    error_line(
        id,
        -32600,
        "invalid request: expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\" and a string \"method\"",
    )
}

fn error_line(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

async fn write_lines<W: AsyncWrite + Unpin>(
    from_rmcp: tokio::io::DuplexStream,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut out: W,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    // What rmcp has written of its next message so far: `read_until` is not cancel-safe, so a
    // message it had begun when an error line won the race stays here and is finished next time.
    let mut partial = Vec::new();
    let mut errors_open = true;
    loop {
        let mut line = tokio::select! {
            n = from_rmcp.read_until(b'\n', &mut partial) => match n {
                Ok(n) if n > 0 => std::mem::take(&mut partial),
                _ => break,
            },
            e = errors.recv(), if errors_open => match e {
                Some(e) => e.into_bytes(),
                None => { errors_open = false; continue }
            },
        };
        // One write per message: the line and its newline together.
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
            break;
        }
    }
    while let Ok(e) = errors.try_recv() {
        let _ = out.write_all(format!("{e}\n").as_bytes()).await;
    }
    let _ = out.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_nested_deeper_than_a_parse_allows_is_refused_here() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"a":{}{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = check(deep.as_bytes()).unwrap_err();
        assert!(e.contains("-32700") && e.contains("recursion"), "{e}");
        // Brackets inside strings do not count.
        let quoted = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"m","params":{{"s":"{}"}}}}"#, "[".repeat(500));
        assert!(check(quoted.as_bytes()).is_ok());
        assert_eq!(nesting(br#"{"a":[{"b":"]]]\"[["}]}"#), 3);
    }

    #[test]
    fn a_message_that_is_not_utf8_is_refused_here() {
        let mut line = br#"{"jsonrpc":"2.0","id":5,"method":"m","params":{"s":""#.to_vec();
        line.extend_from_slice(&[0xff, 0xfe]);
        line.extend_from_slice(br#""}}"#);
        let e = check(&line).unwrap_err();
        assert!(e.contains("-32700"), "{e}");
    }

    #[test]
    fn non_json_gets_a_parse_error() {
        let e = check(b"{not json").unwrap_err();
        assert!(e.contains("-32700"), "{e}");
    }

    #[test]
    fn json_without_method_gets_invalid_request_with_its_id() {
        let e = check(br#"{"jsonrpc":"2.0","id":7}"#).unwrap_err();
        assert!(e.contains("-32600") && e.contains("\"id\":7"), "{e}");
    }

    #[test]
    fn a_non_string_method_gets_invalid_request() {
        let e = check(br#"{"jsonrpc":"2.0","id":"a","method":3}"#).unwrap_err();
        assert!(e.contains("-32600") && e.contains("\"id\":\"a\""), "{e}");
    }

    #[test]
    fn responses_pass_even_with_a_null_result() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#).is_ok());
    }

    #[test]
    fn a_wrong_version_gets_invalid_request() {
        let e = check(br#"{"jsonrpc":"1.0","id":2,"method":"ping","params":{"a":[1,2]}}"#).unwrap_err();
        assert!(e.contains("-32600") && e.contains("\"id\":2"), "{e}");
    }

    #[test]
    fn requests_pass() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_ok());
    }
}
