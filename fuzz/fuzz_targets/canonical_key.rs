//! Fuzz target: canonical JSON and exact result keys. Canonical text must parse back to JSON
//! whose canonical text is the same (so a key never depends on formatting), and the key of the
//! re-parsed value must equal the key of the original. Values holding floats that do not survive
//! serde_json's print + parse (its `float_roundtrip` feature is off) are only checked for panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::results::key::{canonical_json, exact_key};
use serde_json::Value;

fn floats_round_trip(v: &Value) -> bool {
    match v {
        Value::Number(n) => n
            .as_f64()
            .is_none_or(|f| !n.is_f64() || serde_json::from_str::<f64>(&Value::from(f).to_string()).ok() == Some(f)),
        Value::Array(a) => a.iter().all(floats_round_trip),
        Value::Object(m) => m.values().all(floats_round_trip),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let canon = canonical_json(&v);
    let back: Value = match serde_json::from_str(&canon) {
        Ok(b) => b,
        Err(e) => panic!("canonical text does not parse: {e}: {canon}"),
    };
    if !floats_round_trip(&v) {
        return;
    }
    assert_eq!(canonical_json(&back), canon, "canonical text is not a fixed point");
    assert_eq!(exact_key("ns", "tool", &back), exact_key("ns", "tool", &v));
});
