//! Compress and decompress individual blocks.
//!
//! These methods process all the input data at once.
//! It is therefore best used with relatively small blocks
//! (like small network packets).

mod compressor;
mod decompressor;

pub use self::compressor::Compressor;
pub use self::decompressor::Decompressor;

use std::io;

/// Compresses a single block of data to the given destination buffer.
///
/// Returns the number of bytes written, or an error if something happened
/// (for instance if the destination buffer was too small).
///
/// A level of `0` uses zstd's default (currently `3`).
pub fn compress_to_buffer(
    source: &[u8],
    destination: &mut [u8],
    level: i32,
) -> io::Result<usize> {
    Compressor::new().compress_to_buffer(source, destination, level)
}

/// Compresses a block of data and returns the compressed result.
///
/// A level of `0` uses zstd's default (currently `3`).
///
/// Patched for refrain: the compression context is kept per thread and reused, instead of one
/// created and freed per call. Creating one runs `cpuid` (to detect BMI2), which a virtual
/// machine traps: sled compresses every log message with this function, and in a VM the
/// context's creation cost more than the compression itself. The output is the same bytes
/// (`ZSTD_compress_usingDict` resets the context to `level`'s parameters on every call).
pub fn compress(data: &[u8], level: i32) -> io::Result<Vec<u8>> {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Compressor> = std::cell::RefCell::new(Compressor::new());
    }
    COMPRESSOR.with(|c| match c.try_borrow_mut() {
        Ok(mut c) => c.compress(data, level),
        // Not reentrant in practice; a fresh context if it ever is.
        Err(_) => Compressor::new().compress(data, level),
    })
}

/// Deompress a single block of data to the given destination buffer.
///
/// Returns the number of bytes written, or an error if something happened
/// (for instance if the destination buffer was too small).
pub fn decompress_to_buffer(
    source: &[u8],
    destination: &mut [u8],
) -> io::Result<usize> {
    Decompressor::new().decompress_to_buffer(source, destination)
}

/// Decompresses a block of data and returns the decompressed result.
///
/// The decompressed data should be less than `capacity` bytes,
/// or an error will be returned.
pub fn decompress(data: &[u8], capacity: usize) -> io::Result<Vec<u8>> {
    Decompressor::new().decompress(data, capacity)
}

#[cfg(test)]
mod tests {
    use super::{compress, decompress};

    #[test]
    fn a_reused_context_gives_the_bytes_a_fresh_one_gives() {
        let text = include_str!("../../assets/example.txt").as_bytes();
        let big = text.repeat(100);
        let inputs: [&[u8]; 5] = [&big, b"short", text, &text[..text.len() / 2], b""];
        for level in [1, 3, 1] {
            for input in inputs {
                let fresh = super::Compressor::new().compress(input, level).unwrap();
                assert_eq!(compress(input, level).unwrap(), fresh);
            }
        }
    }

    #[test]
    fn test_direct() {
        // Can we include_str!("assets/example.txt")?
        // It's excluded from the packaging step, so maybe not.
        let text = include_str!("../../assets/example.txt");
        crate::test_cycle_unwrap(
            text.as_bytes(),
            |data| compress(data, 1),
            |data| decompress(data, text.len()),
        );
    }
}
