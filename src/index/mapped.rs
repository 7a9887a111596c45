//! Arrays that live either in the heap or in a read-only memory map of a saved graph file.
//!
//! A scope's saved graph holds, per point, its id, its int8 code and its layer-0 neighbour list:
//! about 0.5 KB a point, which held in heap Vecs made the server's memory grow with the store
//! (1.1 GiB at 1M entries) and a scope's first use read the whole file. Mapped, those bytes are
//! file-backed page cache: only the pages a search touches are brought in, and the kernel can
//! drop them again under memory pressure, so the first lookup after a start costs a few page
//! faults instead of a read of the whole file.
//!
//! The file's sections are laid out 8-byte aligned (`persist`), and a mapping starts on a page, so
//! a section is viewed as a typed slice by `bytemuck` (checked, no copy). On a big-endian host the
//! little-endian words are decoded into the heap instead.
//!
//! Mapping a file is `unsafe` because another process could change or truncate it under the
//! mapping. refrain never writes a saved file in place: a new one is written under a temporary
//! name and renamed over the old, which leaves an existing mapping on the old contents. A file of
//! refrain's data directory truncated by something else is out of scope (reading a truncated
//! page raises SIGBUS), as is any other outside edit of the store.

use memmap2::Mmap;
use std::fs::File;
use std::sync::Arc;

/// A word type an array holds: plain old data, stored little-endian.
pub trait Word: bytemuck::Pod + PartialEq + std::fmt::Debug {
    /// The value of a word read as stored (little-endian) on this host.
    fn le_to_host(self) -> Self;
}

impl Word for u32 {
    fn le_to_host(self) -> Self {
        u32::from_le(self)
    }
}

impl Word for u64 {
    fn le_to_host(self) -> Self {
        u64::from_le(self)
    }
}

impl Word for i8 {
    fn le_to_host(self) -> Self {
        self
    }
}

/// An array of `T`: in the heap, or `len` words at byte `at` of a mapped file.
#[derive(Clone)]
pub enum Slab<T> {
    /// Owned words.
    Heap(Vec<T>),
    /// Words in a mapped file (checked in range and aligned when made).
    Mapped {
        /// The mapping.
        map: Arc<Mmap>,
        /// Byte offset of the first word.
        at: usize,
        /// Words.
        len: usize,
    },
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab::Heap(Vec::new())
    }
}

impl<T: Word> Slab<T> {
    /// A view of `len` words at byte `at` of `map`; None when out of range. Little-endian hosts
    /// view the bytes in place; others decode them into the heap.
    pub fn view(map: &Arc<Mmap>, at: usize, len: usize) -> Option<Slab<T>> {
        let bytes = map.get(at..at.checked_add(len.checked_mul(size_of::<T>())?)?)?;
        if cfg!(target_endian = "little") && bytemuck::try_cast_slice::<u8, T>(bytes).is_ok() {
            return Some(Slab::Mapped { map: map.clone(), at, len });
        }
        let words = bytes.chunks_exact(size_of::<T>()).map(|c| bytemuck::pod_read_unaligned::<T>(c).le_to_host());
        Some(Slab::Heap(words.collect()))
    }

    /// The words.
    pub fn as_slice(&self) -> &[T] {
        match self {
            Slab::Heap(v) => v,
            Slab::Mapped { map, at, len } => {
                map.get(*at..*at + *len * size_of::<T>()).and_then(|b| bytemuck::try_cast_slice(b).ok()).unwrap_or(&[])
            }
        }
    }

    /// Whether the words are in a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self, Slab::Mapped { .. })
    }
}

impl<T: Word> std::ops::Deref for Slab<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Word> From<Vec<T>> for Slab<T> {
    fn from(v: Vec<T>) -> Self {
        Slab::Heap(v)
    }
}

impl<T: Word> PartialEq for Slab<T> {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl<T: Word> std::fmt::Debug for Slab<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "heap" };
        write!(f, "Slab({kind}, {} words)", self.len())
    }
}

/// Maps a whole file read-only, with read-ahead off (a graph walk touches scattered pages, and
/// read-ahead would bring in their neighbours for nothing).
#[allow(unsafe_code)]
pub fn map(file: &File) -> std::io::Result<Arc<Mmap>> {
    // SAFETY: the file is one of refrain's saved graphs, which refrain only ever replaces by
    // rename, never changes or truncates in place (see the module comment); a mapping of the old
    // file keeps its contents. Its bytes are only read through bounds-checked slices, and are
    // trusted only once their checksum has been verified (`persist::Check`).
    let map = unsafe { Mmap::map(file)? };
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Random);
    Ok(Arc::new(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_view_reads_the_same_words_as_the_heap_and_refuses_what_is_out_of_range() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let words: Vec<u32> = (0..100).map(|i| i * 7 + 1).collect();
        let mut bytes = vec![0u8; 8];
        words.iter().for_each(|w| bytes.extend_from_slice(&w.to_le_bytes()));
        std::fs::write(&p, &bytes).unwrap();
        let m = map(&File::open(&p).unwrap()).unwrap();
        let v = Slab::<u32>::view(&m, 8, 100).unwrap();
        assert!(v.is_mapped() || cfg!(target_endian = "big"));
        assert_eq!(v, Slab::Heap(words.clone()));
        assert_eq!(v[99], 99 * 7 + 1);
        assert!(Slab::<u32>::view(&m, 8, 101).is_none(), "past the end");
        assert!(Slab::<u32>::view(&m, usize::MAX - 2, 2).is_none(), "overflowing offsets");
        // A misaligned view is decoded into the heap, with the same words.
        let odd = Slab::<u32>::view(&m, 10, 2).unwrap();
        assert!(!odd.is_mapped());
        let le = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        assert_eq!(odd.as_slice(), &[le(10), le(14)]);
    }
}
