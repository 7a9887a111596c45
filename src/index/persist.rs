//! Saved graphs: one file per scope, written right after every build, so a restart loads the
//! graph instead of building it again.
//!
//! A file holds the graph's point ids (ascending), their int8 codes and the frozen arrays. The
//! store stays the durable copy: a load reads from it only the vectors added since the save and
//! the removals noted since (`records::gone`). A file is written to a temporary name, synced and
//! renamed into place (never rewritten or truncated in place, which is what lets a running
//! process keep a mapping of it: `mapped`), and ends with a sha256 of everything before it.
//!
//! Format 3 (written now) lays its sections out 8-byte aligned after a 64-byte header, so the
//! ids, codes and layer-0 arrays are served from a read-only mapping of the file instead of being
//! read into the heap: a scope's first use costs a few page faults, not a read of the whole file
//! (3.6 s and ~0.9 KB of heap per entry at 1M entries when they were read whole).
//!
//! Its checksum is checked off the request path (`Check`, run on a thread of its own by the
//! index), not before the first lookup: hashing 0.5 GB of a 1M-point file costs seconds, which
//! the first lookup after a start would otherwise wait for. Until the check has passed, the scope
//! does not trust the mapping for an answer: the candidates it yields are re-scored from the
//! store's own vector records (the durable copy), so a damaged byte can cost a candidate, never
//! give a wrong hit; and no build starts from its codes. A check that fails drops the scope, which
//! loads again from the store alone (exact scans, then a rebuild). This was chosen over per-block
//! checksums verified on first touch: those would need a verified-bit per block shared by
//! concurrent searches and a check inside the graph walk, for the same guarantee that a single
//! background pass and a re-score of a few candidates give. Before any use the file's shape is
//! checked (its length against the header's counts, the upper layers, the entry point), and every
//! read of the mapped arrays is bounds-checked, so damage can never index out of range.
//!
//! Files of formats 1 (no codes: they come from the store) and 2 (codes, unaligned) are still
//! read as before: whole into the heap, the checksum checked before use; the next build of the
//! scope writes format 3.

use super::graph::Graph;
use super::mapped::{self, Slab};
use super::quant;
use super::records::Tag;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Files without codes (the codes are read from the store).
const MAGIC_V1: &[u8; 16] = b"refrain-graph\0\0\x01";
/// Files with their points' codes, unaligned, read whole.
const MAGIC_V2: &[u8; 16] = b"refrain-graph\0\0\x02";
/// Files with aligned sections, mapped.
const MAGIC: &[u8; 16] = b"refrain-graph\0\0\x03";
/// Format 3's header: magic, dim, n, entry, reserved (u32 each), layer-0 neighbours, upper
/// layers' bytes (u64 each), 16 reserved bytes.
pub(super) const HEADER: usize = 64;
const SUM: usize = 32;

/// A saved graph as read back.
#[derive(Debug)]
pub struct Saved {
    /// Dimensions of the vectors.
    pub dim: usize,
    /// The graph's point ids, ascending.
    pub ids: Slab<u64>,
    /// Their codes end to end (None in a file of format 1).
    pub codes: Option<Slab<i8>>,
    /// The frozen graph.
    pub graph: Graph,
    /// The checksum still to check (a mapped file); None when it was checked while reading.
    pub check: Option<Check>,
}

const PENDING: u8 = 0;
const GOOD: u8 = 1;
const BAD: u8 = 2;

/// Whether a mapped file's checksum has been checked, and how it came out.
#[derive(Debug)]
pub struct Verdict(AtomicU8);

impl Default for Verdict {
    fn default() -> Self {
        Verdict(AtomicU8::new(PENDING))
    }
}

impl Verdict {
    /// The checksum matched.
    pub fn is_good(&self) -> bool {
        self.0.load(Ordering::Acquire) == GOOD
    }

    /// The checksum did not match (or the file could not be read back).
    #[cfg(test)]
    pub fn is_bad(&self) -> bool {
        self.0.load(Ordering::Acquire) == BAD
    }

    fn set(&self, ok: bool) {
        self.0.store(if ok { GOOD } else { BAD }, Ordering::Release);
    }
}

/// The pending checksum check of a mapped file: reads the file (through its own handle, the
/// same file the mapping shows, not whatever now has its name) and compares the sum.
#[derive(Debug)]
pub struct Check {
    file: File,
    len: u64,
    verdict: Arc<Verdict>,
}

impl Check {
    /// The verdict this check will settle.
    pub fn verdict(&self) -> Arc<Verdict> {
        self.verdict.clone()
    }

    /// Reads the whole file and settles the verdict; true when the sum matched. The bytes go
    /// through `read`, not the mapping: the page cache holds them, the process's memory does not.
    pub fn run(mut self) -> bool {
        let ok = self.sum_matches().unwrap_or(false);
        self.verdict.set(ok);
        ok
    }

    fn sum_matches(&mut self) -> std::io::Result<bool> {
        self.file.seek(SeekFrom::Start(0))?;
        let mut left = self.len.saturating_sub(SUM as u64);
        let mut sha = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        while left > 0 {
            let k = (left as usize).min(buf.len());
            self.file.read_exact(&mut buf[..k])?;
            sha.update(&buf[..k]);
            left -= k as u64;
        }
        let mut sum = [0u8; SUM];
        self.file.read_exact(&mut sum)?;
        Ok(sha.finalize().as_slice() == sum)
    }
}

/// The file of a scope's graph.
pub fn file(dir: &Path, tag: &Tag) -> PathBuf {
    dir.join(format!("{}.graph", hex::encode(tag)))
}

/// A writer that hashes what it writes and knows its position (for the sections' padding).
struct Out<W: Write> {
    w: W,
    sha: Sha256,
    at: u64,
}

impl<W: Write> Out<W> {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.sha.update(b);
        self.w.write_all(b)?;
        self.at += b.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> std::io::Result<()> {
        let n = (8 - self.at % 8) % 8;
        self.put(&[0u8; 8][..n as usize])
    }

    /// Little-endian words, in chunks.
    fn words<T: Copy, const N: usize>(&mut self, a: &[T], le: impl Fn(T) -> [u8; N]) -> std::io::Result<()> {
        let mut b = Vec::with_capacity(64 * 1024);
        for chunk in a.chunks(64 * 1024 / N) {
            b.clear();
            chunk.iter().for_each(|x| b.extend_from_slice(&le(*x)));
            self.put(&b)?;
        }
        self.pad()
    }
}

fn pad8(x: usize) -> Option<usize> {
    x.checked_add(7).map(|x| x & !7)
}

/// Where format 3's sections start: (ids, codes, offsets0, adj0, upper, sum).
fn layout(dim: usize, n: usize, adj0: usize, upper: usize) -> Option<[usize; 6]> {
    let ids = HEADER;
    let codes = ids.checked_add(n.checked_mul(8)?)?;
    let offsets0 = pad8(codes.checked_add(n.checked_mul(quant::stride(dim))?)?)?;
    let adj = pad8(offsets0.checked_add(n.checked_add(1)?.checked_mul(4)?)?)?;
    let up = pad8(adj.checked_add(adj0.checked_mul(4)?)?)?;
    let sum = pad8(up.checked_add(upper)?)?;
    Some([ids, codes, offsets0, adj, up, sum])
}

/// Writes a scope's graph (atomically: a crash leaves the old file or the new one), streamed
/// through a hash (no second copy of the codes in memory). `codes` are the points' codes end to
/// end, in the order of `ids`. Returns the file's size.
pub fn save(dir: &Path, tag: &Tag, dim: usize, ids: &[u64], codes: &[i8], graph: &Graph) -> std::io::Result<u64> {
    let n = ids.len();
    if codes.len() != n * quant::stride(dim) || graph.len() != n || n > u32::MAX as usize {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "graph, ids and codes disagree"));
    }
    std::fs::create_dir_all(dir)?;
    let path = file(dir, tag);
    let tmp = path.with_extension("graph.tmp");
    let mut upper = Vec::new();
    graph.write_upper(&mut upper);
    let mut out = Out { w: BufWriter::with_capacity(1 << 20, File::create(&tmp)?), sha: Sha256::new(), at: 0 };
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    for w in [dim as u32, n as u32, graph.entry(), 0] {
        h.extend_from_slice(&w.to_le_bytes());
    }
    h.extend_from_slice(&(graph.adj0().len() as u64).to_le_bytes());
    h.extend_from_slice(&(upper.len() as u64).to_le_bytes());
    h.resize(HEADER, 0);
    out.put(&h)?;
    out.words(ids, u64::to_le_bytes)?;
    out.words(codes, |c: i8| c.to_le_bytes())?;
    out.words(graph.offsets0(), u32::to_le_bytes)?;
    out.words(graph.adj0(), u32::to_le_bytes)?;
    out.put(&upper)?;
    out.pad()?;
    let sum = out.sha.finalize();
    out.w.write_all(&sum)?;
    let size = out.at + SUM as u64;
    out.w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(size)
}

/// Reads a scope's graph, or None when there is no usable file. A format-3 file is mapped and
/// comes with its checksum check still to run; older ones are read whole and checked here.
pub fn load(dir: &Path, tag: &Tag) -> Option<Saved> {
    let path = file(dir, tag);
    let mut f = File::open(&path).ok()?;
    let mut magic = [0u8; 16];
    f.read_exact(&mut magic).ok()?;
    let parsed = if &magic == MAGIC {
        open_mapped(f)
    } else {
        let mut b = magic.to_vec();
        f.read_to_end(&mut b).ok()?;
        parse_old(&b)
    };
    if parsed.is_none() {
        tracing::warn!(file = %path.display(), "saved index graph is damaged; the scope is searched exactly and rebuilt");
    }
    parsed
}

/// Maps a format-3 file and checks its shape (not its checksum: `Check`).
fn open_mapped(file: File) -> Option<Saved> {
    let map = mapped::map(&file).ok()?;
    let h = map.get(..HEADER)?;
    let word = |i: usize| -> Option<u32> { Some(u32::from_le_bytes(h.get(16 + i * 4..20 + i * 4)?.try_into().ok()?)) };
    let long =
        |at: usize| -> Option<usize> { usize::try_from(u64::from_le_bytes(h.get(at..at + 8)?.try_into().ok()?)).ok() };
    let (dim, n, entry) = (word(0)? as usize, word(1)? as usize, word(2)?);
    let (adj0_len, upper_len) = (long(32)?, long(40)?);
    let [ids_at, codes_at, off_at, adj_at, up_at, sum_at] = layout(dim, n, adj0_len, upper_len)?;
    if dim == 0 || sum_at.checked_add(SUM)? != map.len() {
        return None;
    }
    let ids = Slab::view(&map, ids_at, n)?;
    let codes = Slab::view(&map, codes_at, n.checked_mul(quant::stride(dim))?)?;
    let offsets0 = Slab::view(&map, off_at, n + 1)?;
    let adj0 = Slab::view(&map, adj_at, adj0_len)?;
    let graph = Graph::from_parts(entry, offsets0, adj0, map.get(up_at..up_at + upper_len)?)?;
    if graph.len() != n {
        return None;
    }
    let check = Check { len: map.len() as u64, file, verdict: Arc::new(Verdict::default()) };
    Some(Saved { dim, ids, codes: Some(codes), graph, check: Some(check) })
}

/// Reads a file of format 1 or 2 (whole, checksum first).
fn parse_old(b: &[u8]) -> Option<Saved> {
    let (body, sum) = b.split_at_checked(b.len().checked_sub(SUM)?)?;
    if Sha256::digest(body).as_slice() != sum {
        return None;
    }
    let (mut r, with_codes) = match body.strip_prefix(MAGIC_V2.as_slice()) {
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
        Some(Slab::Heap(raw.iter().map(|b| *b as i8).collect()))
    } else {
        None
    };
    let graph = Graph::read(&mut r)?;
    let ascending = ids.windows(2).all(|w| w[0] < w[1]);
    (r.is_empty() && ascending && graph.len() == ids.len() && dim > 0).then_some(Saved {
        dim,
        ids: Slab::Heap(ids),
        codes,
        graph,
        check: None,
    })
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

/// A file as a refrain of format 1 (no `codes`) or 2 wrote it (tests of the older formats).
#[cfg(test)]
pub fn old_file(ids: &[u64], codes: Option<&[i8]>, dim: usize, g: &Graph) -> Vec<u8> {
    let mut old = if codes.is_some() { MAGIC_V2 } else { MAGIC_V1 }.to_vec();
    old.extend_from_slice(&(dim as u32).to_le_bytes());
    old.extend_from_slice(&(ids.len() as u32).to_le_bytes());
    ids.iter().for_each(|id| old.extend_from_slice(&id.to_le_bytes()));
    old.extend(codes.unwrap_or_default().iter().map(|c| *c as u8));
    g.write(&mut old);
    let sum = Sha256::digest(&old);
    old.extend_from_slice(&sum);
    old
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Vec<u64>, Vec<i8>, Graph) {
        let codes: Vec<i8> = (0..50u32).flat_map(|i| quant::encode(&[(i as f32).sin(), (i as f32).cos()])).collect();
        let g = Graph::build(&codes, quant::stride(2), 50, 16);
        ((0..50).map(|i| i * 3 + 1).collect(), codes, g)
    }

    #[test]
    fn a_saved_graph_is_mapped_back_as_written_and_its_check_passes() {
        let dir = tempfile::tempdir().unwrap();
        let (ids, codes, g) = sample();
        let tag = [7u8; 8];
        let size = save(dir.path(), &tag, 2, &ids, &codes, &g).unwrap();
        assert_eq!(size, std::fs::metadata(file(dir.path(), &tag)).unwrap().len());
        let s = load(dir.path(), &tag).unwrap();
        assert_eq!((s.dim, s.ids.as_slice(), s.codes.as_deref()), (2, &ids[..], Some(&codes[..])));
        assert_eq!(s.graph, g);
        if cfg!(target_endian = "little") {
            assert!(s.ids.is_mapped() && s.codes.as_ref().is_some_and(Slab::is_mapped) && s.graph.is_mapped());
        }
        let check = s.check.unwrap();
        let verdict = check.verdict();
        assert!(!verdict.is_good() && !verdict.is_bad(), "not checked while loading");
        assert!(check.run());
        assert!(verdict.is_good());
        assert!(save(dir.path(), &tag, 2, &ids[1..], &codes, &g).is_err(), "ids and graph disagree");
    }

    #[test]
    fn files_of_the_older_formats_are_still_read_whole_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let (ids, codes, g) = sample();
        let tag = [7u8; 8];
        std::fs::write(file(dir.path(), &tag), old_file(&ids, Some(&codes), 2, &g)).unwrap();
        let s = load(dir.path(), &tag).unwrap();
        assert_eq!((s.ids.as_slice(), s.codes.as_deref()), (&ids[..], Some(&codes[..])));
        assert!(s.check.is_none() && !s.ids.is_mapped() && !s.graph.is_mapped());
        assert_eq!(s.graph, g);
        std::fs::write(file(dir.path(), &tag), old_file(&ids, None, 2, &g)).unwrap();
        let s = load(dir.path(), &tag).unwrap();
        assert_eq!((s.ids.as_slice(), s.codes.is_none(), &s.graph), (&ids[..], true, &g));
        let mut b = old_file(&ids, Some(&codes), 2, &g);
        let mid = b.len() / 2;
        b[mid] ^= 1;
        std::fs::write(file(dir.path(), &tag), &b).unwrap();
        assert!(load(dir.path(), &tag).is_none(), "an old file is checked before use");
    }

    #[test]
    fn a_damaged_byte_fails_the_check_and_a_damaged_shape_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let (ids, codes, g) = sample();
        let tag = [7u8; 8];
        save(dir.path(), &tag, 2, &ids, &codes, &g).unwrap();
        let f = file(dir.path(), &tag);
        let good = std::fs::read(&f).unwrap();
        // Every single flipped bit is caught: at load (the shape) or by the check (the sum).
        for at in (0..good.len()).step_by(7) {
            let mut b = good.clone();
            b[at] ^= 1 << (at % 8);
            std::fs::write(&f, &b).unwrap();
            if let Some(s) = load(dir.path(), &tag) {
                assert!(!s.check.unwrap().run(), "flipped byte {at} passed the check");
            }
        }
        std::fs::write(&f, &good[..good.len() - 1]).unwrap();
        assert!(load(dir.path(), &tag).is_none(), "a short file");
        std::fs::write(&f, &good[..10]).unwrap();
        assert!(load(dir.path(), &tag).is_none());
    }
}
