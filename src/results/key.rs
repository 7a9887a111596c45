//! Exact keys: sha256 over namespace + tool + the canonical JSON of the arguments.
//!
//! Canonical JSON sorts object keys (at every depth) and drops insignificant whitespace, so two
//! calls that differ only in key order or formatting share a key; array order is kept because it
//! can change what a tool does. serde_json keeps insertion order here (`preserve_order`), so the
//! sort is explicit.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical text of a JSON value: sorted object keys, no whitespace.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(k) {
                    write_canonical(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The exact key of a call: lowercase hex sha256 of namespace, tool and canonical arguments, each
/// length-prefixed so no two different triples can produce the same bytes.
pub fn exact_key(namespace: &str, tool: &str, args: &Value) -> String {
    let canon = canonical_json(args);
    let mut h = Sha256::new();
    for part in [namespace, tool, canon.as_str()] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let a: Value = serde_json::from_str(r#"{"path": "a.rs", "opts": {"x": 1, "y": [1, 2]}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"opts":{"y":[1,2],"x":1},"path":"a.rs"}"#).unwrap();
        assert_eq!(exact_key("ns", "Read", &a), exact_key("ns", "Read", &b));
    }

    #[test]
    fn array_order_tool_namespace_and_values_all_matter() {
        let base = exact_key("ns", "Grep", &json!({"p": [1, 2]}));
        assert_ne!(base, exact_key("ns", "Grep", &json!({"p": [2, 1]})));
        assert_ne!(base, exact_key("ns", "Glob", &json!({"p": [1, 2]})));
        assert_ne!(base, exact_key("other", "Grep", &json!({"p": [1, 2]})));
        assert_ne!(base, exact_key("ns", "Grep", &json!({"p": [1, 3]})));
    }

    #[test]
    fn parts_cannot_bleed_into_each_other() {
        assert_ne!(exact_key("ab", "c", &json!({})), exact_key("a", "bc", &json!({})));
    }

    #[test]
    fn canonical_text_is_compact_and_sorted() {
        assert_eq!(canonical_json(&json!({"b": "x y", "a": [true, null]})), r#"{"a":[true,null],"b":"x y"}"#);
    }
}
