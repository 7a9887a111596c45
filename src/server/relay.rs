//! A follower's connection to the owner: tool calls only, as plain JSON-RPC lines on the socket.
//!
//! rmcp's client parses every answer as any of the dozens of results a server may send (an
//! untagged enum: each is tried in turn on a buffered copy), which cost a follower more CPU than
//! all the rest of a relayed call. A follower only ever sends `tools/call`, so the answer is read
//! as a tool result directly; anything else falls back to rmcp's own parsing. The owner still
//! serves a plain MCP session: the handshake is MCP's `initialize`.
//!
//! A call whose caller stops waiting is cancelled at the owner (`notifications/cancelled`); when
//! the connection ends, every call waiting on it fails with `TransportClosed`, which the link
//! answers by re-establishing (taking over the store if the owner died).

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonRpcMessage, ProtocolVersion, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::service::ServiceError;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};

/// What a waiting call receives.
type Answer = Result<CallToolResponse, ServiceError>;

/// Calls waiting for their answer, by request id; None once the connection has ended.
type Pending = Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>;

/// An initialized connection to the owner.
pub struct Relay {
    /// Whole lines for the writer task: a line is never written in part, even when the call
    /// that sent it is dropped.
    lines: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    next_id: AtomicU64,
    tasks: [tokio::task::JoinHandle<()>; 2],
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.tasks.iter().for_each(tokio::task::JoinHandle::abort);
    }
}

/// A `tools/call` request as written on the socket.
#[derive(Serialize)]
struct Call<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'static str,
    params: &'a CallToolRequestParams,
}

/// An answer from the owner, read as a tool call's answer.
#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
    result: Option<CallToolResult>,
    error: Option<ErrorData>,
}

impl Relay {
    /// Initializes an MCP session on `stream` (the caller bounds the wait) and starts reading
    /// answers.
    pub async fn connect(stream: UnixStream) -> Result<Relay, String> {
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        let init = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": ProtocolVersion::LATEST_WITH_INITIALIZE,
                "capabilities": {},
                "clientInfo": {"name": "refrain-follower", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        send_line(&mut write, &init).await.map_err(|e| format!("sending initialize: {e}"))?;
        let mut line = Vec::new();
        loop {
            line.clear();
            if read.read_until(b'\n', &mut line).await.map_err(|e| e.to_string())? == 0 {
                return Err("the owner closed the connection during initialize".into());
            }
            let v: serde_json::Value = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(_) => continue,
            };
            if v.get("id").and_then(serde_json::Value::as_u64) != Some(0) {
                continue;
            }
            if let Some(e) = v.get("error") {
                return Err(format!("the owner refused initialize: {e}"));
            }
            break;
        }
        let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        send_line(&mut write, &initialized).await.map_err(|e| format!("sending initialized: {e}"))?;
        let pending: Arc<Pending> = Arc::new(Mutex::new(Some(HashMap::new())));
        let (lines, queued) = mpsc::unbounded_channel();
        let tasks = [tokio::spawn(read_answers(read, pending.clone())), tokio::spawn(write_lines(write, queued))];
        Ok(Relay { lines, pending, next_id: AtomicU64::new(1), tasks })
    }

    /// Sends one tool call and waits for its answer. Dropping the future cancels the call.
    pub async fn call_tool_once(&self, params: CallToolRequestParams) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match lock(&self.pending).as_mut() {
            Some(p) => p.insert(id, tx),
            None => return Err(ServiceError::TransportClosed),
        };
        let mut waiting = Waiting { relay: self, id: Some(id) };
        let mut line = serde_json::to_vec(&Call { jsonrpc: "2.0", id, method: "tools/call", params: &params })
            .map_err(|e| ServiceError::McpError(ErrorData::invalid_params(e.to_string(), None)))?;
        line.push(b'\n');
        if self.lines.send(line).is_err() {
            return Err(ServiceError::TransportClosed);
        }
        let answer = rx.await.unwrap_or(Err(ServiceError::TransportClosed));
        waiting.id = None;
        answer
    }
}

/// Cancels a call at the owner when its caller stops waiting before the answer.
struct Waiting<'a> {
    relay: &'a Relay,
    id: Option<u64>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let was_pending = lock(&self.relay.pending).as_mut().and_then(|p| p.remove(&id)).is_some();
        if !was_pending {
            return;
        }
        let cancel = serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the caller stopped waiting"},
        });
        if let Ok(mut line) = serde_json::to_vec(&cancel) {
            line.push(b'\n');
            // A connection that has ended has nothing left to cancel.
            let _ = self.relay.lines.send(line);
        }
    }
}

fn lock(p: &Pending) -> MutexGuard<'_, Option<HashMap<u64, oneshot::Sender<Answer>>>> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

async fn send_line(w: &mut OwnedWriteHalf, v: &serde_json::Value) -> std::io::Result<()> {
    write_line(w, serde_json::to_vec(v)?).await
}

/// Writes one message and its newline in one write.
async fn write_line(w: &mut OwnedWriteHalf, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    w.write_all(&line).await
}

/// Writes queued lines in order, as many as are waiting in one write, until the relay goes or
/// the connection ends.
async fn write_lines(mut w: OwnedWriteHalf, mut queued: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(mut buf) = queued.recv().await {
        while let Ok(more) = queued.try_recv() {
            buf.extend_from_slice(&more);
        }
        if w.write_all(&buf).await.is_err() {
            break;
        }
    }
}

/// Hands each answer to its waiting call until the connection ends; then fails the calls still
/// waiting and refuses new ones.
async fn read_answers(mut read: BufReader<OwnedReadHalf>, pending: Arc<Pending>) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match read.read_until(b'\n', &mut line).await {
            Ok(n) if n > 0 => {}
            _ => break,
        }
        let Some((id, answer)) = parse(&line) else { continue };
        if let Some(tx) = lock(&pending).as_mut().and_then(|p| p.remove(&id)) {
            let _ = tx.send(answer);
        }
    }
    let waiting = lock(&pending).take();
    for (_, tx) in waiting.into_iter().flatten() {
        let _ = tx.send(Err(ServiceError::TransportClosed));
    }
}

/// The call an answer belongs to and the answer; None for what is not an answer to a call
/// (notifications, requests from the owner).
fn parse(line: &[u8]) -> Option<(u64, Answer)> {
    if let Ok(Reply { id: Some(id), result, error }) = serde_json::from_slice::<Reply>(line) {
        match (result, error) {
            (Some(r), _) => return Some((id, Ok(CallToolResponse::Complete(r)))),
            (None, Some(e)) => return Some((id, Err(ServiceError::McpError(e)))),
            (None, None) => {}
        }
    }
    // Not a plain tool result (an input request, a task): rmcp reads it.
    match serde_json::from_slice::<ServerJsonRpcMessage>(line).ok()? {
        JsonRpcMessage::Response(r) => {
            let id = request_id(&r.id)?;
            let answer = match r.result {
                ServerResult::CallToolResult(r) => Ok(CallToolResponse::Complete(r)),
                ServerResult::InputRequiredResult(r) => Ok(CallToolResponse::InputRequired(r)),
                ServerResult::CreateTaskResult(r) => Ok(CallToolResponse::Task(r)),
                _ => Err(ServiceError::UnexpectedResponse),
            };
            Some((id, answer))
        }
        JsonRpcMessage::Error(e) => Some((request_id(e.id.as_ref()?)?, Err(ServiceError::McpError(e.error)))),
        _ => None,
    }
}

fn request_id(id: &rmcp::model::RequestId) -> Option<u64> {
    match id {
        rmcp::model::NumberOrString::Number(n) => u64::try_from(*n).ok(),
        rmcp::model::NumberOrString::String(s) => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_result_is_read_directly() {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#;
        let (id, answer) = parse(line).unwrap();
        assert_eq!(id, 7);
        match answer {
            Ok(CallToolResponse::Complete(r)) => assert_eq!(r.is_error, Some(false)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_error_answer_is_the_callers_error() {
        let line = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad args"}}"#;
        let (id, answer) = parse(line).unwrap();
        assert_eq!(id, 3);
        assert!(matches!(answer, Err(ServiceError::McpError(e)) if e.message == "bad args"));
    }

    /// A fake owner on the other end of a socket pair: answers initialize, then hands the test
    /// each line it reads.
    async fn fake_owner() -> (Relay, BufReader<OwnedReadHalf>, OwnedWriteHalf) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let owner = tokio::spawn(async move {
            let (r, mut w) = theirs.into_split();
            let mut r = BufReader::new(r);
            let mut line = String::new();
            r.read_line(&mut line).await.unwrap();
            assert!(line.contains("\"initialize\""), "{line}");
            w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n").await.unwrap();
            line.clear();
            r.read_line(&mut line).await.unwrap();
            assert!(line.contains("notifications/initialized"), "{line}");
            (r, w)
        });
        let relay = Relay::connect(ours).await.unwrap();
        let (r, w) = owner.await.unwrap();
        (relay, r, w)
    }

    fn params() -> CallToolRequestParams {
        CallToolRequestParams::new("cache_stats")
    }

    #[tokio::test]
    async fn answers_reach_their_calls_whatever_their_order() {
        let (relay, mut r, mut w) = fake_owner().await;
        let owner = tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..2 {
                let mut line = String::new();
                r.read_line(&mut line).await.unwrap();
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                assert_eq!(v["method"], "tools/call");
                ids.push(v["id"].as_u64().unwrap());
            }
            for id in ids.iter().rev() {
                let answer = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{id}\"}}]}}}}\n"
                );
                w.write_all(answer.as_bytes()).await.unwrap();
            }
            (r, w)
        });
        let (a, b) = tokio::join!(relay.call_tool_once(params()), relay.call_tool_once(params()));
        let text = |r: Answer| match r {
            Ok(CallToolResponse::Complete(r)) => r.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default(),
            other => panic!("{other:?}"),
        };
        assert_eq!((text(a), text(b)), ("1".to_string(), "2".to_string()));
        drop(owner.await.unwrap());
    }

    #[tokio::test]
    async fn an_owner_that_goes_away_fails_the_waiting_call_and_later_ones() {
        let (relay, mut r, w) = fake_owner().await;
        let call = relay.call_tool_once(params());
        let owner = async move {
            let mut line = String::new();
            r.read_line(&mut line).await.unwrap();
            drop((r, w));
        };
        let (answer, ()) = tokio::join!(call, owner);
        assert!(matches!(answer, Err(ServiceError::TransportClosed)), "{answer:?}");
        assert!(matches!(relay.call_tool_once(params()).await, Err(ServiceError::TransportClosed)));
    }

    #[tokio::test]
    async fn a_call_its_caller_stops_waiting_for_is_cancelled_at_the_owner() {
        let (relay, mut r, _w) = fake_owner().await;
        let gave_up = tokio::time::timeout(std::time::Duration::from_millis(50), relay.call_tool_once(params())).await;
        assert!(gave_up.is_err());
        let mut lines = Vec::new();
        for _ in 0..2 {
            let mut line = String::new();
            r.read_line(&mut line).await.unwrap();
            lines.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
        }
        assert_eq!(lines[1]["method"], "notifications/cancelled");
        assert_eq!(lines[1]["params"]["requestId"], lines[0]["id"]);
    }

    #[test]
    fn notifications_are_not_answers() {
        assert!(parse(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#).is_none());
    }
}
