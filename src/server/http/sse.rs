//! The legacy HTTP+SSE transport (MCP 2024-11-05), which Claude Code's `-t sse` and Cursor still
//! use: GET `/sse` opens an event stream whose first event, `endpoint`, names the POST target
//! (`/message?sessionId=...`); each POSTed JSON-RPC message is answered 202 and the replies go out
//! on the stream as `message` events.
//!
//! Each session runs the handler over a pair of channels (rmcp's Sink/Stream transport). A session
//! ends when its stream closes, the handler stops, or the server shuts down. Host, Origin, token
//! and declared size are checked before this code runs (see `guard`).

use super::guard::Refusal;
use crate::server::Handler;
use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt, stream};
use http::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde::Deserialize;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Messages buffered per direction before a sender waits.
const CHANNEL: usize = 64;

/// The path clients POST to; the `endpoint` event names it with the session id.
pub const MESSAGE_PATH: &str = "/message";

/// The open sessions and what every new session needs.
pub struct SseState {
    handler: Handler,
    sessions: Mutex<HashMap<String, mpsc::Sender<ClientJsonRpcMessage>>>,
    shutdown: CancellationToken,
    max_body: usize,
}

impl SseState {
    /// State for sessions served by `handler`, all ended when `shutdown` is cancelled.
    pub fn new(handler: Handler, shutdown: CancellationToken, max_body: usize) -> SseState {
        SseState { handler, sessions: Mutex::new(HashMap::new()), shutdown, max_body }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<ClientJsonRpcMessage>>> {
        // A poisoned map only means a panic elsewhere while holding it; the map itself stays valid.
        self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The routes `/sse` and `/message`.
pub fn router(state: Arc<SseState>) -> Router {
    Router::new().route("/sse", get(open)).route(MESSAGE_PATH, post(message)).with_state(state)
}

/// Ends a session when its event stream is dropped (client gone or server stopping).
struct SessionEnd {
    state: Arc<SseState>,
    id: String,
    ct: CancellationToken,
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        self.ct.cancel();
        self.state.sessions().remove(&self.id);
        tracing::debug!(session = %self.id, "SSE session closed");
    }
}

async fn open(State(state): State<Arc<SseState>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(CHANNEL);
    let (out_tx, out_rx) = mpsc::channel::<ServerJsonRpcMessage>(CHANNEL);
    let ct = state.shutdown.child_token();
    state.sessions().insert(id.clone(), in_tx);
    tracing::debug!(session = %id, "SSE session opened");
    tokio::spawn(run_session(state.handler.clone(), out_tx, in_rx, ct.clone(), id.clone()));

    let endpoint = Event::default().event("endpoint").data(format!("{MESSAGE_PATH}?sessionId={id}"));
    let end = SessionEnd { state, id, ct: ct.clone() };
    let messages = out_rx.map(move |message| {
        let _owned_by_stream = &end;
        Ok(to_event(&message))
    });
    let events = stream::once(async move { Ok(endpoint) }).chain(messages).take_until(ct.cancelled_owned());
    Sse::new(events).keep_alive(KeepAlive::default())
}

async fn run_session(
    handler: Handler,
    out: mpsc::Sender<ServerJsonRpcMessage>,
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    ct: CancellationToken,
    id: String,
) {
    match handler.serve_with_ct((out, incoming), ct).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::info!(session = %id, error = %e, "SSE client left before initializing"),
    }
}

fn to_event(message: &ServerJsonRpcMessage) -> Event {
    match serde_json::to_string(message) {
        Ok(json) => Event::default().event("message").data(json),
        Err(e) => {
            tracing::error!(error = %e, "could not serialise a server message");
            Event::default().comment("a message could not be serialised")
        }
    }
}

#[derive(Debug, Deserialize)]
struct Target {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

async fn message(State(state): State<Arc<SseState>>, Query(target): Query<Target>, body: Body) -> Response {
    let Some(id) = target.session_id else {
        return (StatusCode::BAD_REQUEST, "missing sessionId: post to the endpoint the /sse stream named")
            .into_response();
    };
    let Some(mut sender) = state.sessions().get(&id).cloned() else {
        let text = format!("unknown session {id:?}: open GET /sse first and post to the endpoint it names");
        return (StatusCode::NOT_FOUND, text).into_response();
    };
    let bytes = match read_limited(body, state.max_body).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => return Refusal::TooLarge { len: None, max: state.max_body }.into_response(),
        Err(BodyError::Read(e)) => {
            return (StatusCode::BAD_REQUEST, format!("could not read the request body: {e}")).into_response();
        }
    };
    let parsed = match serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        Ok(parsed) => parsed,
        Err(e) => {
            let text = format!("invalid message: the body is not one JSON-RPC 2.0 message ({e})");
            return (StatusCode::BAD_REQUEST, text).into_response();
        }
    };
    if sender.send(parsed).await.is_err() {
        let text = format!("session {id:?} has ended: open a new one with GET /sse");
        return (StatusCode::GONE, text).into_response();
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

enum BodyError {
    TooLarge,
    Read(axum::Error),
}

/// Reads the body, stopping as soon as it grows past `max` bytes.
async fn read_limited(body: Body, max: usize) -> Result<Vec<u8>, BodyError> {
    let mut chunks = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(BodyError::Read)?;
        if buf.len() + chunk.len() > max {
            return Err(BodyError::TooLarge);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn body_over_the_limit_is_refused_even_without_a_length() {
        let chunks: Vec<Result<&'static [u8], std::io::Error>> = vec![Ok(b"0123456789"), Ok(b"0123456789")];
        let body = Body::from_stream(stream::iter(chunks));
        assert!(matches!(read_limited(body, 15).await, Err(BodyError::TooLarge)));
        assert_eq!(read_limited(Body::from("0123456789"), 10).await.ok(), Some(b"0123456789".to_vec()));
    }
}
