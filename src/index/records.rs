//! Stored vectors: the source of truth the index is rebuilt from, written compactly (raw f32s, not
//! JSON) through the store's byte API.

use crate::store::{self, Key, Store, trees};

/// One stored vector: its scope, the record it points at, and the vector.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRecord {
    /// Search scope (e.g. `results/ns/WebSearch` or `plans`).
    pub scope: String,
    /// The key of the record this vector belongs to.
    pub target: Vec<u8>,
    /// Unit-length vector.
    pub vector: Vec<f32>,
}

fn encode(r: &VectorRecord) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + r.scope.len() + r.target.len() + r.vector.len() * 4);
    for part in [r.scope.as_bytes(), &r.target] {
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
        out.extend_from_slice(part);
    }
    r.vector.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    out
}

fn decode(b: &[u8]) -> Option<VectorRecord> {
    let mut at = 0usize;
    let mut part = || {
        let n = u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize;
        let p = b.get(at + 4..at + 4 + n)?.to_vec();
        at += 4 + n;
        Some(p)
    };
    let scope = String::from_utf8(part()?).ok()?;
    let target = part()?;
    let rest = b.get(at..)?;
    let vector = rest.chunks_exact(4).filter_map(|c| c.try_into().ok().map(f32::from_le_bytes)).collect();
    Some(VectorRecord { scope, target, vector })
}

pub(super) fn put(store: &Store, id: u64, rec: &VectorRecord) -> store::Result<()> {
    store.put_bytes(trees::VECTORS, Key::new().u64(id).bytes(), &encode(rec))
}

pub(super) fn get(store: &Store, id: u64) -> Option<VectorRecord> {
    let bytes = store.get_bytes(trees::VECTORS, Key::new().u64(id).bytes()).ok()??;
    decode(&bytes)
}

pub(super) fn remove(store: &Store, id: u64) -> store::Result<bool> {
    store.remove(trees::VECTORS, Key::new().u64(id).bytes())
}

pub(super) fn for_each(store: &Store, mut f: impl FnMut(u64, VectorRecord)) -> store::Result<()> {
    store.for_each_bytes(trees::VECTORS, |k, v| match (store::keys::u64_at(k, 0), decode(v)) {
        (Some(id), Some(rec)) => f(id, rec),
        _ => tracing::warn!("skipping unreadable vector record"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let r = VectorRecord { scope: "s".into(), target: vec![1, 2, 0], vector: vec![0.5, -0.25] };
        assert_eq!(decode(&encode(&r)), Some(r));
    }
}
