use std::io;

use super::{Decoder, Encoder};

/// Decompress from the given source as if using a `Decoder`.
///
/// The input data must be in the zstd frame format.
///
/// Patched for refrain: the source is read whole and decompressed with a context kept per
/// thread, instead of a `Decoder` built per call. sled decompresses every page it reads with
/// this function, and a `Decoder` costs a new context (whose creation runs `cpuid`, which a
/// virtual machine traps) and a 128 KiB input buffer (an `mmap`/`munmap` pair under refrain's
/// malloc thresholds) per page. Same output bytes, same errors for damaged or cut-off input
/// (`a_reused_context_decodes_as_a_decoder_does`).
pub fn decode_all<R: io::Read>(mut source: R) -> io::Result<Vec<u8>> {
    use std::cell::RefCell;
    thread_local! {
        static DCTX: RefCell<zstd_safe::DCtx<'static>> = RefCell::new(zstd_safe::create_dctx());
    }
    let mut input = Vec::new();
    source.read_to_end(&mut input)?;
    DCTX.with(|c| match c.try_borrow_mut() {
        Ok(mut c) => decode_with(&mut c, &input),
        // Not reentrant in practice; a fresh context if it ever is.
        Err(_) => decode_with(&mut zstd_safe::create_dctx(), &input),
    })
}

/// Decompresses every frame of `input` with `ctx` (reset first: a previous call may have
/// stopped mid-frame on an error).
fn decode_with(
    ctx: &mut zstd_safe::DCtx<'static>,
    input: &[u8],
) -> io::Result<Vec<u8>> {
    ctx.reset().map_err(crate::map_error_code)?;
    let mut out: Vec<u8> = Vec::with_capacity(input.len().saturating_mul(4).max(64));
    let mut src = zstd_safe::InBuffer::around(input);
    // A frame is expected until the context reports one finished (hint 0) with no input left:
    // an empty input is an incomplete frame, as for a `Decoder`.
    let mut in_frame = true;
    while src.pos() < input.len() || in_frame {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(64));
        }
        let before = (src.pos(), out.len());
        let len = out.len();
        let hint = {
            let mut dst = zstd_safe::OutBuffer::around_pos(&mut out, len);
            ctx.decompress_stream(&mut dst, &mut src)
                .map_err(crate::map_error_code)?
        };
        in_frame = hint != 0;
        if in_frame && (src.pos(), out.len()) == before && out.len() < out.capacity() {
            // No progress with room to write: the input ends inside a frame.
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "incomplete frame",
            ));
        }
    }
    Ok(out)
}

/// Decompress from the given source as if using a `Decoder`.
///
/// Decompressed data will be appended to `destination`.
pub fn copy_decode<R, W>(source: R, mut destination: W) -> io::Result<()>
where
    R: io::Read,
    W: io::Write,
{
    let mut decoder = Decoder::new(source)?;
    io::copy(&mut decoder, &mut destination)?;
    Ok(())
}

/// Compress all data from the given source as if using an `Encoder`.
///
/// Result will be in the zstd frame format.
///
/// A level of `0` uses zstd's default (currently `3`).
pub fn encode_all<R: io::Read>(source: R, level: i32) -> io::Result<Vec<u8>> {
    let mut result = Vec::<u8>::new();
    copy_encode(source, &mut result, level)?;
    Ok(result)
}

/// Compress all data from the given source as if using an `Encoder`.
///
/// Compressed data will be appended to `destination`.
///
/// A level of `0` uses zstd's default (currently `3`).
pub fn copy_encode<R, W>(
    mut source: R,
    destination: W,
    level: i32,
) -> io::Result<()>
where
    R: io::Read,
    W: io::Write,
{
    let mut encoder = Encoder::new(destination, level)?;
    io::copy(&mut source, &mut encoder)?;
    encoder.finish()?;
    Ok(())
}

#[cfg(tests)]
mod tests {}

#[cfg(test)]
mod reuse_tests {
    use super::{decode_all, encode_all};
    use std::io;

    /// What upstream's `decode_all` does: a `Decoder` per call.
    fn by_decoder(input: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        io::copy(&mut super::Decoder::new(input)?, &mut out)?;
        Ok(out)
    }

    #[test]
    fn a_reused_context_decodes_as_a_decoder_does() {
        let text = include_str!("../../assets/example.txt").as_bytes();
        let big = text.repeat(300);
        let mut two_frames = encode_all(text, 3).unwrap();
        two_frames.extend(encode_all(&b"and a second frame"[..], 1).unwrap());
        let whole = encode_all(&big[..], 3).unwrap();
        let cut = whole[..whole.len() / 2].to_vec();
        let mut damaged = encode_all(text, 3).unwrap();
        let mid = damaged.len() / 2;
        damaged[mid] ^= 0xff;
        let block = crate::block::compress(text, 1).unwrap();
        let inputs: Vec<Vec<u8>> = vec![
            whole,
            two_frames,
            block,
            encode_all(&b""[..], 3).unwrap(),
            Vec::new(),
            cut.clone(),
            damaged,
            b"not zstd at all".to_vec(),
            encode_all(text, 19).unwrap(),
        ];
        // Twice in a row, so the second pass runs on a context the first left mid-frame.
        for _ in 0..2 {
            for (i, input) in inputs.iter().enumerate() {
                let want = by_decoder(input);
                let got = decode_all(&input[..]);
                match (&want, &got) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b),
                    (Err(_), Err(_)) => {}
                    _ => panic!("input {i}: decoder {:?} vs reused context {:?}", want.as_ref().map(Vec::len), got.as_ref().map(Vec::len)),
                }
            }
        }
        assert!(decode_all(&cut[..]).is_err(), "a frame cut short is an error");
        assert_eq!(decode_all(&encode_all(&big[..], 3).unwrap()[..]).unwrap(), big);
    }
}
