//! Saved graphs: one file per scope, written right after every build, so a restart loads the
//! graph instead of building it again.
//!
//! A file holds the graph's point ids (ascending), their int8 codes and the frozen arrays, so a
//! scope loads from one sequential read instead of a walk over every stored vector (which, at 100k
//! vectors, cost more memory in the store's page cache than the codes themselves). The store stays
//! the durable copy: a load reads from it only the vectors added since the save and the removals
//! noted since (`records::gone`). A file is written to a temporary name, synced and renamed into
//! place, and ends with a sha256 of everything before it: a torn or damaged file is ignored (the
//! scope is searched exactly and rebuilt), never trusted. Files of the previous format (no codes)
//! are still read: their codes come from the store, as before.

use super::graph::Graph;
use super::quant;
use super::records::Tag;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Files without codes (the codes are read from the store).
const MAGIC_V1: &[u8; 16] = b"refrain-graph\0\0\x01";
/// Files with their points' codes.
const MAGIC: &[u8; 16] = b"refrain-graph\0\0\x02";

/// A saved graph as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    /// Dimensions of the vectors.
    pub dim: usize,
    /// The graph's point ids, ascending.
    pub ids: Vec<u64>,
    /// Their codes end to end (None in a file of the previous format).
    pub codes: Option<Vec<i8>>,
    /// The frozen graph.
    pub graph: Graph,
}

/// The file of a scope's graph.
pub fn file(dir: &Path, tag: &Tag) -> PathBuf {
    dir.join(format!("{}.graph", hex::encode(tag)))
}

/// Writes a scope's graph (atomically: a crash leaves the old file or the new one).
/// `codes` are the points' codes end to end, in the order of `ids`.
pub fn save(dir: &Path, tag: &Tag, dim: usize, ids: &[u64], codes: &[i8], graph: &Graph) -> std::io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    let mut b = Vec::with_capacity(64 + ids.len() * 100 + codes.len());
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&(dim as u32).to_le_bytes());
    b.extend_from_slice(&(ids.len() as u32).to_le_bytes());
    ids.iter().for_each(|id| b.extend_from_slice(&id.to_le_bytes()));
    b.extend(codes.iter().map(|c| *c as u8));
    graph.write(&mut b);
    let sum = Sha256::digest(&b);
    b.extend_from_slice(&sum);
    let path = file(dir, tag);
    let tmp = path.with_extension("graph.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&b)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(b.len() as u64)
}

/// Reads a scope's graph, or None when there is no usable file.
pub fn load(dir: &Path, tag: &Tag) -> Option<Saved> {
    let path = file(dir, tag);
    let b = std::fs::read(&path).ok()?;
    let parsed = parse(&b);
    if parsed.is_none() {
        tracing::warn!(file = %path.display(), "saved index graph is damaged; the scope is searched exactly and rebuilt");
    }
    parsed
}

fn parse(b: &[u8]) -> Option<Saved> {
    let (body, sum) = b.split_at_checked(b.len().checked_sub(32)?)?;
    if Sha256::digest(body).as_slice() != sum {
        return None;
    }
    let (mut r, with_codes) = match body.strip_prefix(MAGIC.as_slice()) {
        Some(r) => (r, true),
        None => (body.strip_prefix(MAGIC_V1.as_slice())?, false),
    };
    let word = |r: &mut &[u8]| -> Option<u32> {
        let (h, t) = r.split_at_checked(4)?;
        *r = t;
        Some(u32::from_le_bytes(h.try_into().ok()?))
    };
    let dim = word(&mut r)? as usize;
    let n = word(&mut r)? as usize;
    let (raw, rest) = r.split_at_checked(n.checked_mul(8)?)?;
    let ids: Vec<u64> = raw.chunks_exact(8).filter_map(|c| c.try_into().ok().map(u64::from_le_bytes)).collect();
    r = rest;
    let codes = if with_codes {
        let (raw, rest) = r.split_at_checked(n.checked_mul(quant::stride(dim))?)?;
        r = rest;
        Some(raw.iter().map(|b| *b as i8).collect())
    } else {
        None
    };
    let graph = Graph::read(&mut r)?;
    let ascending = ids.windows(2).all(|w| w[0] < w[1]);
    (r.is_empty() && ascending && graph.len() == ids.len() && dim > 0).then_some(Saved { dim, ids, codes, graph })
}

/// Removes a scope's graph file, if any.
pub fn remove(dir: &Path, tag: &Tag) {
    let _ = std::fs::remove_file(file(dir, tag));
}

/// Removes files of the old index format (hnsw_rs dumps and their manifest): they cannot be read
/// any more, and the store has everything needed to build again.
pub fn remove_old_format(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() && p.join("graph.hnsw.graph").exists() || name.starts_with("manifest.json") {
            let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_round_trip_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let codes: Vec<i8> = (0..50u32).flat_map(|i| quant::encode(&[(i as f32).sin(), (i as f32).cos()])).collect();
        let g = Graph::build(&codes, quant::stride(2), 50, 16);
        let ids: Vec<u64> = (0..50).map(|i| i * 3 + 1).collect();
        let tag = [7u8; 8];
        save(dir.path(), &tag, 2, &ids, &codes, &g).unwrap();
        assert_eq!(
            load(dir.path(), &tag),
            Some(Saved { dim: 2, ids: ids.clone(), codes: Some(codes.clone()), graph: g.clone() })
        );
        // A file of the previous format (no codes) is still read.
        let mut old = MAGIC_V1.to_vec();
        old.extend_from_slice(&2u32.to_le_bytes());
        old.extend_from_slice(&(ids.len() as u32).to_le_bytes());
        ids.iter().for_each(|id| old.extend_from_slice(&id.to_le_bytes()));
        g.write(&mut old);
        let sum = Sha256::digest(&old);
        old.extend_from_slice(&sum);
        std::fs::write(file(dir.path(), &tag), &old).unwrap();
        assert_eq!(load(dir.path(), &tag), Some(Saved { dim: 2, ids: ids.clone(), codes: None, graph: g.clone() }));
        save(dir.path(), &tag, 2, &ids, &codes, &g).unwrap();
        let f = file(dir.path(), &tag);
        let mut b = std::fs::read(&f).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 1;
        std::fs::write(&f, &b).unwrap();
        assert_eq!(load(dir.path(), &tag), None);
        std::fs::write(&f, &b[..10]).unwrap();
        assert_eq!(load(dir.path(), &tag), None);
    }
}
