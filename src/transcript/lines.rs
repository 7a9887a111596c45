//! History lines read with a cap: a line longer than the cap (a huge tool output, an image) is
//! read past without being kept, so memory is bounded by the cap, not by the longest line a
//! session file happens to hold. The caller counts such a line as skipped and says so.

use std::io::{self, BufRead};

/// The longest line kept: far above any request's usage record or an ordinary tool output, small
/// enough that a reader thread parsing one stays within tens of MB.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// One line as read.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line, with its `\n` when it had one.
    Kept(&'a [u8]),
    /// A line over the cap, read past without being kept.
    TooLong,
}

/// Lines of a reader, each at most `cap` bytes long (longer ones come back as `TooLong`).
pub struct Lines<R> {
    reader: R,
    cap: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `reader`, longer ones than `cap` bytes skipped.
    pub fn new(reader: R, cap: usize) -> Lines<R> {
        Lines { reader, cap, buf: Vec::new() }
    }

    /// The next line and the bytes it took (its `\n` included); None at the end.
    pub fn next_line(&mut self) -> io::Result<Option<(Line<'_>, u64)>> {
        self.buf.clear();
        let (mut read, mut over) = (0u64, false);
        loop {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !over && self.buf.len() + take <= self.cap {
                self.buf.extend_from_slice(&chunk[..take]);
            } else if !over {
                over = true;
                self.buf = Vec::new();
            }
            self.reader.consume(take);
            read += take as u64;
            if done {
                break;
            }
        }
        Ok(match (read, over) {
            (0, _) => None,
            (_, true) => Some((Line::TooLong, read)),
            (_, false) => Some((Line::Kept(&self.buf), read)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8], cap: usize, chunk: usize) -> Vec<(Option<Vec<u8>>, u64)> {
        let mut lines = Lines::new(io::BufReader::with_capacity(chunk, text), cap);
        let mut out = Vec::new();
        while let Some((l, n)) = lines.next_line().unwrap() {
            out.push((
                match l {
                    Line::Kept(b) => Some(b.to_vec()),
                    Line::TooLong => None,
                },
                n,
            ));
        }
        out
    }

    #[test]
    fn long_lines_are_read_past_and_the_rest_kept_whole() {
        let text = b"{\"a\":1}\n0123456789abcdef\n\n{\"b\":2}";
        for chunk in [1, 3, 64] {
            let got = all(text, 10, chunk);
            assert_eq!(
                got,
                [
                    (Some(b"{\"a\":1}\n".to_vec()), 8),
                    (None, 17),
                    (Some(b"\n".to_vec()), 1),
                    (Some(b"{\"b\":2}".to_vec()), 7)
                ],
                "chunk {chunk}"
            );
        }
        assert_eq!(all(b"", 10, 8), []);
        assert_eq!(all(b"0123456789", 10, 4), [(Some(b"0123456789".to_vec()), 10)], "exactly the cap is kept");
        assert_eq!(all(b"0123456789x", 10, 4), [(None, 11)], "a last line without \\n over the cap");
    }
}
