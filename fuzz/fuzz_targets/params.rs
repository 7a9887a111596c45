//! Fuzz target: parameter parsing (the typed values found in a task, and the masked text). Must
//! never panic and must be deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::plan::params::extract;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (params, masked) = extract(text);
    for p in &params {
        assert!(!p.kind.name().is_empty());
    }
    assert_eq!((params, masked), extract(text), "parameter parsing is not deterministic");
});
