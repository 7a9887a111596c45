//! Token counts with a real tokenizer, for everything refrain adds to or removes from an agent's
//! context.
//!
//! refrain's savings are believed only net: the tool definitions it lists, the notes, plans and
//! suggestions it writes are counted as carefully as the reads it removes, and all with one
//! tokenizer so the two sides compare. That tokenizer is `o200k_base`, the encoding of OpenAI's
//! current models (what Codex sends); Anthropic publishes no tokenizer for its current models, and
//! o200k's counts for English and code sit within a few percent of the counts Anthropic's API
//! reports (the README's budget table gives both where they were measured). The encoder takes
//! ~100 ms to build, so it is built once, on first use, and only by the paths that count.

use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// The tokenizer every count in refrain uses.
pub const TOKENIZER: &str = "o200k_base";

fn encoder() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| match tiktoken_rs::o200k_base() {
        Ok(b) => Some(b),
        Err(e) => {
            tracing::error!(error = %e, "the o200k_base tokenizer failed to load; counting about 4 bytes a token");
            None
        }
    })
    .as_ref()
}

/// Tokens in `text`. Falls back to one token per 4 bytes (rounded up) only if the embedded
/// tokenizer table fails to load, which it never does in a correct build.
pub fn count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    match encoder() {
        Some(bpe) => bpe.encode_ordinary(text).len() as u64,
        None => text.len().div_ceil(4) as u64,
    }
}

/// Builds the encoder now (on a background thread at server start), so the first count a
/// request makes does not wait for it.
pub fn warm() {
    let _ = encoder();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_the_tokenizers_own() {
        assert_eq!(count(""), 0);
        // Known o200k_base encodings: "hello world" is two tokens, and a long run of one
        // character is far fewer tokens than its bytes.
        assert_eq!(count("hello world"), 2);
        let a = "a".repeat(1000);
        assert!(count(&a) < 200, "{}", count(&a));
        assert!(count("fn main() { println!(\"hi\"); }") >= 8);
    }

    #[test]
    fn the_encoder_builds_quickly_enough_to_warm_at_start() {
        let t = std::time::Instant::now();
        warm();
        eprintln!("o200k_base built in {} ms", t.elapsed().as_millis());
        assert!(count("warm") > 0);
    }
}
