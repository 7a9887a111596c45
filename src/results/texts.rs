//! Stored queries by their exact (normalised) text: a query asked again word for word is found
//! through a hash of its text, never through the approximate vector index, so it always reaches
//! its own entry however many entries the tool holds.
//!
//! Tree `response_texts`: sha256(namespace, tool, normalised query) -> exact key. The row of the
//! latest entry stored with that text wins; rows are removed with their entry.

use crate::store::{self, Batch, Store, trees};
use crate::verify::text;
use sha2::{Digest, Sha256};

fn row(namespace: &str, tool: &str, query: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    for part in [namespace, tool, text::normalise(query).as_str()] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().to_vec()
}

/// Files an entry's query under its text (buffered; the caller flushes).
pub fn put(store: &Store, namespace: &str, tool: &str, query: &str, key: &str) -> store::Result<()> {
    if text::normalise(query).is_empty() {
        return Ok(());
    }
    store.put(trees::RESPONSE_TEXTS, &row(namespace, tool, query), &key.to_string())
}

/// Adds an entry's text row to a batch, as `put` writes it.
pub fn put_into(batch: &mut Batch, namespace: &str, tool: &str, query: &str, key: &str) -> store::Result<()> {
    if text::normalise(query).is_empty() {
        return Ok(());
    }
    batch.put(trees::RESPONSE_TEXTS, &row(namespace, tool, query), &key.to_string())
}

/// The key of the entry stored with this exact (normalised) query text, if any.
pub fn find(store: &Store, namespace: &str, tool: &str, query: &str) -> store::Result<Option<String>> {
    if text::normalise(query).is_empty() {
        return Ok(None);
    }
    store.get(trees::RESPONSE_TEXTS, &row(namespace, tool, query))
}

/// Removes the text row of an entry, unless a newer entry with the same text owns it now.
pub fn remove(store: &Store, namespace: &str, tool: &str, query: &str, key: &str) -> store::Result<()> {
    let r = row(namespace, tool, query);
    if store.get::<String>(trees::RESPONSE_TEXTS, &r)?.as_deref() == Some(key) {
        store.remove(trees::RESPONSE_TEXTS, &r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_finds_its_entry_and_only_in_its_scope() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        put(&store, "ns", "WebSearch", "How do I install Rust?", "k1").unwrap();
        assert_eq!(find(&store, "ns", "WebSearch", "  How do I  install Rust ").unwrap().as_deref(), Some("k1"));
        assert_eq!(find(&store, "ns", "WebFetch", "How do I install Rust?").unwrap(), None);
        assert_eq!(find(&store, "other", "WebSearch", "How do I install Rust?").unwrap(), None);
        assert_eq!(find(&store, "ns", "WebSearch", "how do i install rust").unwrap(), None, "case counts");
    }

    #[test]
    fn removing_an_older_entry_keeps_the_newer_owner() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        put(&store, "ns", "t", "q", "old").unwrap();
        put(&store, "ns", "t", "q", "new").unwrap();
        remove(&store, "ns", "t", "q", "old").unwrap();
        assert_eq!(find(&store, "ns", "t", "q").unwrap().as_deref(), Some("new"));
        remove(&store, "ns", "t", "q", "new").unwrap();
        assert_eq!(find(&store, "ns", "t", "q").unwrap(), None);
    }
}
