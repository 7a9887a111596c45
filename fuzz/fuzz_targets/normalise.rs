//! Fuzz target: the task normaliser (any text -> action, kinds, typed values, skeleton) and the
//! bucket key built from it. Must never panic, and must be deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::plan::key::IntentKey;
use refrain::plan::normalise::normalise;

fuzz_target!(|data: &[u8]| {
    let Ok(task) = std::str::from_utf8(data) else { return };
    let n = normalise(task);
    let key = IntentKey::of(&n);
    let _ = key.lookup_buckets();
    assert_eq!(n, normalise(task), "the normaliser is not deterministic");
});
