//! Order-preserving keys, built in one place.
//!
//! Text segments are written as UTF-8 with any 0x00 byte escaped and end with 0x00, so a prefix of
//! segments is a byte prefix of every longer key; integers are big-endian so they sort numerically.

/// A key under construction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Key(Vec<u8>);

impl Key {
    /// An empty key.
    pub fn new() -> Key {
        Key(Vec::new())
    }

    /// Appends a text segment.
    pub fn text(mut self, s: &str) -> Key {
        for b in s.bytes() {
            if b == 0 {
                self.0.extend_from_slice(&[0x01, 0x01]);
            } else if b == 1 {
                self.0.extend_from_slice(&[0x01, 0x02]);
            } else {
                self.0.push(b);
            }
        }
        self.0.push(0);
        self
    }

    /// Appends a big-endian integer segment.
    pub fn u64(mut self, n: u64) -> Key {
        self.0.extend_from_slice(&n.to_be_bytes());
        self
    }

    /// Appends raw bytes (a hash) as the final segment.
    pub fn raw(mut self, b: &[u8]) -> Key {
        self.0.extend_from_slice(b);
        self
    }

    /// The encoded bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The encoded bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads the big-endian u64 at `offset` of a key.
pub fn u64_at(key: &[u8], offset: usize) -> Option<u64> {
    key.get(offset..offset + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map(u64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_prefix_is_a_byte_prefix() {
        let a = Key::new().text("ns").text("tool").u64(3);
        let p = Key::new().text("ns");
        assert!(a.bytes().starts_with(p.bytes()));
        assert!(!Key::new().text("nsx").bytes().starts_with(p.bytes()));
    }

    #[test]
    fn integers_sort_numerically() {
        assert!(Key::new().u64(2).bytes() < Key::new().u64(10).bytes());
        assert_eq!(u64_at(Key::new().text("a").u64(77).bytes(), 2), Some(77));
    }
}
