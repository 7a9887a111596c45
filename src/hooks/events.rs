//! Session events noted by hooks (compactions), kept in the EVENTS tree so later cache-break
//! analysis knows where a session was compacted. Keys are session + time + event, so a retried
//! note writes the same record again rather than a second one.

use crate::store::{self, Key, Store, trees};
use serde::{Deserialize, Serialize};

/// One noted event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    /// `claude-code` or `codex`.
    pub agent: String,
    /// `PreCompact`, `PostCompact`, …
    pub event: String,
    /// The agent's session id.
    pub session_id: String,
    /// When the hook saw it (ms since the Unix epoch).
    pub at_ms: u64,
    /// `manual` or `auto`, when the agent says.
    pub trigger: Option<String>,
    /// The session transcript.
    pub transcript_path: Option<String>,
}

fn key(e: &SessionEvent) -> Key {
    Key::new().text(&e.session_id).u64(e.at_ms).text(&e.event)
}

/// Stores an event (buffered; the caller flushes).
pub fn record(store: &Store, e: &SessionEvent) -> store::Result<()> {
    store.put(trees::EVENTS, key(e).bytes(), e)
}

/// Every event of a session, oldest first.
pub fn of_session(store: &Store, session_id: &str) -> store::Result<Vec<SessionEvent>> {
    Ok(store.scan(trees::EVENTS, Key::new().text(session_id).bytes())?.into_iter().map(|(_, v)| v).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_kept_per_session_in_time_order_and_retries_do_not_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let ev = |at, event: &str| SessionEvent {
            agent: "claude-code".into(),
            event: event.into(),
            session_id: "s1".into(),
            at_ms: at,
            trigger: Some("manual".into()),
            transcript_path: None,
        };
        record(&s, &ev(20, "PostCompact")).unwrap();
        record(&s, &ev(10, "PreCompact")).unwrap();
        record(&s, &ev(10, "PreCompact")).unwrap();
        let got: Vec<String> = of_session(&s, "s1").unwrap().into_iter().map(|e| e.event).collect();
        assert_eq!(got, vec!["PreCompact", "PostCompact"]);
        assert!(of_session(&s, "s2").unwrap().is_empty());
    }
}
