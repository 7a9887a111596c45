//! Fuzz target: secret redaction of text and of JSON values. Must never panic, must be idempotent
//! (redacting redacted text finds nothing more), and must remove every secret it counted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::results::redactor;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let r = redactor();
    let (once, n) = r.redact_str(text);
    let (twice, m) = r.redact_str(&once);
    assert_eq!(m, 0, "a second pass found {m} more secret(s) in {once:?}");
    assert_eq!(once, twice);
    if n > 0 {
        assert!(once.contains("[REDACTED:"), "{n} secrets counted but no marker in {once:?}");
    }
    if let Ok(mut v) = serde_json::from_str::<Value>(text) {
        r.redact_value(&mut v);
        let mut again = v.clone();
        assert_eq!(r.redact_value(&mut again), 0, "a redacted value still holds a secret: {v}");
    }
});
