//! Stored vectors: the one durable copy of every vector, the source each scope is loaded from.
//!
//! Key: the scope's 8-byte tag, then the vector id (big-endian), so one scope is one key range.
//! Value (format 2): the format byte, the target key's length (u16 LE) and bytes, then the int8
//! code (`quant`). The scope names behind the tags are registered in the `meta` tree.
//!
//! Format 1 (before codes: key = id alone, value = scope, target and raw f32s) is converted in
//! place by `migrate` the first time a newer refrain opens the store.

use super::quant;
use crate::store::{self, Batch, Key, Store, trees};
use sha2::{Digest, Sha256};

/// Format byte of a code record.
const FORMAT: u8 = 2;

/// A scope's key prefix.
pub type Tag = [u8; 8];

/// The tag of a scope name.
pub fn tag(scope: &str) -> Tag {
    let d = Sha256::digest(format!("refrain-index-scope\0{scope}").as_bytes());
    let mut t = [0u8; 8];
    t.copy_from_slice(&d[..8]);
    t
}

fn key(tag: &Tag, id: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(tag);
    k[8..].copy_from_slice(&id.to_be_bytes());
    k
}

fn registry_key(tag: &Tag) -> Vec<u8> {
    Key::new().text("index-scope").raw(tag).into_bytes()
}

/// Records a scope's name under its tag (idempotent).
pub fn register(store: &Store, scope: &str) -> store::Result<()> {
    let k = registry_key(&tag(scope));
    if !store.contains(trees::META, &k)? {
        store.put(trees::META, &k, &scope.to_string())?;
    }
    Ok(())
}

/// Every registered scope name.
pub fn scopes(store: &Store) -> store::Result<Vec<String>> {
    let prefix = Key::new().text("index-scope").into_bytes();
    Ok(store.scan::<String>(trees::META, &prefix)?.into_iter().map(|(_, name)| name).collect())
}

/// Writes one vector's code (buffered; the caller flushes).
pub fn put(store: &Store, tag: &Tag, id: u64, target: &[u8], code: &[i8]) -> store::Result<()> {
    store.put_bytes(trees::VECTORS, &key(tag, id), &value(target, code))
}

/// Adds one vector's code to a batch, as `put` writes it.
pub fn put_into(batch: &mut Batch, tag: &Tag, id: u64, target: &[u8], code: &[i8]) {
    batch.put_bytes(trees::VECTORS, &key(tag, id), &value(target, code));
}

fn value(target: &[u8], code: &[i8]) -> Vec<u8> {
    let t = &target[..target.len().min(u16::MAX as usize)];
    let mut v = Vec::with_capacity(3 + t.len() + code.len());
    v.push(FORMAT);
    v.extend_from_slice(&(t.len() as u16).to_le_bytes());
    v.extend_from_slice(t);
    v.extend(code.iter().map(|c| *c as u8));
    v
}

/// Removes one vector; true when it existed. The removal is also noted in `vectors_gone`, so a
/// graph saved before it (which holds the vector's code) loads without it.
pub fn remove(store: &Store, tag: &Tag, id: u64) -> store::Result<bool> {
    let existed = store.remove(trees::VECTORS, &key(tag, id))?;
    if existed {
        store.put_marker(trees::VECTORS_GONE, &key(tag, id))?;
    }
    Ok(existed)
}

/// Ids of a scope's vectors removed since its graph was last saved (ascending).
pub fn gone(store: &Store, tag: &Tag) -> store::Result<Vec<u64>> {
    let mut ids = Vec::new();
    store.scan_bytes(trees::VECTORS_GONE, tag, |k, _| {
        ids.extend(store::keys::u64_at(k, 8));
        true
    })?;
    Ok(ids)
}

/// Forgets the noted removals of a scope that its newly saved graph (`kept`, ascending ids) no
/// longer holds; removals of points it still holds stay noted.
pub fn forget_gone(store: &Store, tag: &Tag, kept: &[u64]) -> store::Result<()> {
    for id in gone(store, tag)? {
        if kept.binary_search(&id).is_err() {
            store.remove(trees::VECTORS_GONE, &key(tag, id))?;
        }
    }
    Ok(())
}

/// Splits a format-2 value into (target, code).
fn split(v: &[u8]) -> Option<(&[u8], &[u8])> {
    let (&f, rest) = v.split_first()?;
    if f != FORMAT {
        return None;
    }
    let n = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    Some((rest.get(2..2 + n)?, rest.get(2 + n..)?))
}

/// The target key a vector points at.
pub fn target(store: &Store, tag: &Tag, id: u64) -> store::Result<Option<Vec<u8>>> {
    Ok(store.get_bytes(trees::VECTORS, &key(tag, id))?.and_then(|v| split(&v).map(|(t, _)| t.to_vec())))
}

/// The target key and code of one stored vector, if it is there and readable.
pub fn record(store: &Store, tag: &Tag, id: u64) -> store::Result<Option<(Vec<u8>, Vec<i8>)>> {
    Ok(store.get_bytes(trees::VECTORS, &key(tag, id))?.and_then(|v| {
        let (t, c) = split(&v)?;
        quant::dim_of(c.len())?;
        Some((t.to_vec(), c.iter().map(|b| *b as i8).collect()))
    }))
}

/// The code of one stored vector, if it is there and readable.
pub fn code(store: &Store, tag: &Tag, id: u64) -> store::Result<Option<Vec<i8>>> {
    Ok(record(store, tag, id)?.map(|(_, code)| code))
}

/// The dimension of a scope's stored vectors, read from its first readable record (None when
/// it holds none).
pub fn stored_dim(store: &Store, tag: &Tag) -> store::Result<Option<usize>> {
    let mut dim = None;
    store.scan_bytes_from(trees::VECTORS, tag, tag, |_, v| {
        dim = split(v).and_then(|(_, code)| quant::dim_of(code.len()));
        dim.is_none()
    })?;
    Ok(dim)
}

/// Visits the (id, code) of a scope's vectors with ids above `after` (all of them for None), in
/// id order; what comes before is not read. Unreadable records are skipped.
pub fn scan_after(store: &Store, tag: &Tag, after: Option<u64>, mut f: impl FnMut(u64, &[i8])) -> store::Result<()> {
    let mut bad = 0usize;
    let mut buf: Vec<i8> = Vec::new();
    let from = match after {
        Some(id) if id == u64::MAX => return Ok(()),
        Some(id) => key(tag, id + 1).to_vec(),
        None => tag.to_vec(),
    };
    store.scan_bytes_from(trees::VECTORS, tag, &from, |k, v| {
        match (store::keys::u64_at(k, 8), split(v)) {
            (Some(id), Some((_, code))) if quant::dim_of(code.len()).is_some() => {
                buf.clear();
                buf.extend(code.iter().map(|b| *b as i8));
                f(id, &buf);
            }
            _ => bad += 1,
        }
        true
    })?;
    if bad > 0 {
        tracing::warn!(skipped = bad, "unreadable vector records skipped");
    }
    Ok(())
}

/// Converts format-1 records (f32 vectors keyed by id alone) into codes under their scope's
/// tag, once per store (a marker in `meta` says it is done). Returns how many were converted;
/// the caller flushes.
pub fn migrate(store: &Store) -> store::Result<usize> {
    // Checked once per store, not on every open: the check reads every stored vector.
    let done = Key::new().text("index-format").into_bytes();
    if store.get::<u8>(trees::META, &done)? == Some(FORMAT) {
        return Ok(0);
    }
    let mut old: Vec<Vec<u8>> = Vec::new();
    store.for_each_bytes(trees::VECTORS, |k, _| {
        if k.len() == 8 {
            old.push(k.to_vec());
        }
    })?;
    let mut n = 0;
    for k in old {
        let Some(v) = store.get_bytes(trees::VECTORS, &k)? else { continue };
        if let (Some(id), Some((scope, target, vector))) = (store::keys::u64_at(&k, 0), decode_v1(&v)) {
            register(store, &scope)?;
            put(store, &tag(&scope), id, &target, &quant::encode(&vector))?;
            n += 1;
        }
        store.remove(trees::VECTORS, &k)?;
    }
    // Best effort (a full store refuses it): without the marker the next open checks again.
    if let Err(e) = store.put(trees::META, &done, &FORMAT) {
        tracing::debug!(error = %e, "index format marker not written");
    }
    Ok(n)
}

/// Decodes a format-1 value: u32-prefixed scope and target, then little-endian f32s.
fn decode_v1(b: &[u8]) -> Option<(String, Vec<u8>, Vec<f32>)> {
    let mut at = 0usize;
    let mut part = || {
        let n = u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize;
        let p = b.get(at + 4..at + 4 + n)?.to_vec();
        at += 4 + n;
        Some(p)
    };
    let scope = String::from_utf8(part()?).ok()?;
    let target = part()?;
    let vector = b.get(at..)?.chunks_exact(4).filter_map(|c| c.try_into().ok().map(f32::from_le_bytes)).collect();
    Some((scope, target, vector))
}

/// Writes a format-1 record, as refrain before int8 codes did (for migration tests).
#[cfg(test)]
pub fn put_v1(store: &Store, id: u64, scope: &str, target: &[u8], vector: &[f32]) -> store::Result<()> {
    let mut out = Vec::new();
    for part in [scope.as_bytes(), target] {
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
        out.extend_from_slice(part);
    }
    vector.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    store.put_bytes(trees::VECTORS, Key::new().u64(id).bytes(), &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_stay_inside_their_scope() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (a, b) = (tag("results/default/WebSearch"), tag("plans"));
        put(&store, &a, 7, b"key-a", &quant::encode(&[0.6, 0.8])).unwrap();
        put(&store, &b, 3, b"plan-b", &quant::encode(&[1.0, 0.0])).unwrap();
        let mut seen = Vec::new();
        scan_after(&store, &a, None, |id, code| seen.push((id, quant::decode(code)))).unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].0, 7);
        assert!((seen[0].1[1] - 0.8).abs() < 0.01);
        assert_eq!(target(&store, &a, 7).unwrap().as_deref(), Some(&b"key-a"[..]));
        assert!(remove(&store, &a, 7).unwrap());
        assert_eq!(target(&store, &a, 7).unwrap(), None);
    }

    #[test]
    fn format_one_records_are_converted_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        put_v1(&store, 42, "plans", b"p1", &[0.0, 1.0, 0.0]).unwrap();
        assert_eq!(migrate(&store).unwrap(), 1);
        assert_eq!(migrate(&store).unwrap(), 0, "a second run finds nothing left");
        assert_eq!(scopes(&store).unwrap(), vec!["plans".to_string()]);
        let mut seen = Vec::new();
        scan_after(&store, &tag("plans"), None, |id, code| seen.push((id, quant::decode(code)))).unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].0, 42);
        assert!((seen[0].1[1] - 1.0).abs() < 0.01);
        assert_eq!(target(&store, &tag("plans"), 42).unwrap().as_deref(), Some(&b"p1"[..]));
    }
}
