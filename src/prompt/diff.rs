//! The first place two requests differ: block, JSON path, character offset and excerpts.
//!
//! Blocks are compared in prefix order by path, role and canonical bytes; inside the first
//! differing block the JSON values are walked to the first differing leaf.

use super::request::{Block, Level, Request};
use serde::Serialize;
use serde_json::Value;

/// Characters of context shown on each side of a divergence.
const EXCERPT: usize = 40;

/// Where two requests first differ.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Divergence {
    /// Index of the first differing block in prefix order.
    pub block: usize,
    /// Its level.
    pub level: Level,
    /// Message (or tool / system block) index.
    pub index: usize,
    /// Content block index inside the message, if any.
    pub sub: Option<usize>,
    /// JSON path of the first differing value (e.g. `system[2].text`).
    pub path: String,
    /// Character offset inside that value where the texts part.
    pub char_offset: usize,
    /// The earlier request around that point (empty when the block was added).
    pub before: String,
    /// The later request around that point (empty when the block was removed).
    pub after: String,
}

/// The first differing block of `a` and `b`, or `None` when `b` starts with all of `a`
/// (an append-only change).
pub fn first_divergence(a: &Request, b: &Request) -> Option<Divergence> {
    let n = a.blocks.len().min(b.blocks.len());
    let i = (0..n).find(|&i| !same_block(&a.blocks[i], &b.blocks[i]));
    match i {
        Some(i) => Some(describe(i, Some(&a.blocks[i]), Some(&b.blocks[i]))),
        None if a.blocks.len() > b.blocks.len() => Some(describe(n, Some(&a.blocks[n]), None)),
        None => None,
    }
}

/// Whether two blocks are byte-identical for the cache.
pub fn same_block(x: &Block, y: &Block) -> bool {
    x.text == y.text && x.path == y.path && x.role == y.role
}

fn describe(i: usize, x: Option<&Block>, y: Option<&Block>) -> Divergence {
    let base = x.or(y);
    let (level, index, sub) = base.map(|b| (b.level, b.index, b.sub)).unwrap_or((Level::Messages, 0, None));
    let mut d = Divergence {
        block: i,
        level,
        index,
        sub,
        path: String::new(),
        char_offset: 0,
        before: String::new(),
        after: String::new(),
    };
    match (x, y) {
        (Some(x), Some(y)) if x.path != y.path => {
            d.path = x.path.clone();
            d.before = clip(&x.text, 0, EXCERPT * 2);
            d.after = clip(&y.text, 0, EXCERPT * 2);
        }
        (Some(x), Some(y)) if x.role != y.role => {
            d.path = format!("{}.role", x.path.split(".content").next().unwrap_or(&x.path));
            d.before = x.role.clone().unwrap_or_default();
            d.after = y.role.clone().unwrap_or_default();
        }
        (Some(x), Some(y)) => {
            let (va, vb) = (parse_or_string(&x.text), parse_or_string(&y.text));
            let (suffix, la, lb) = first_leaf_diff(&va, &vb);
            d.path = format!("{}{}", x.path, suffix);
            let (sa, sb) = (leaf_text(la), leaf_text(lb));
            let (off, byte) = common_prefix(&sa, &sb);
            d.char_offset = off;
            d.before = window(&sa, byte);
            d.after = window(&sb, byte);
        }
        (Some(x), None) => {
            d.path = x.path.clone();
            d.before = clip(&x.text, 0, EXCERPT * 2);
        }
        (None, Some(y)) => {
            d.path = y.path.clone();
            d.after = clip(&y.text, 0, EXCERPT * 2);
        }
        (None, None) => {}
    }
    d
}

fn parse_or_string(text: &str) -> Value {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
    } else {
        Value::String(text.to_string())
    }
}

/// Walks two values to their first differing leaf; returns the path suffix and the two leaves.
pub fn first_leaf_diff<'a>(a: &'a Value, b: &'a Value) -> (String, Option<&'a Value>, Option<&'a Value>) {
    let mut path = String::new();
    let (mut a, mut b) = (a, b);
    loop {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let xk: Vec<&String> = x.keys().collect();
                let yk: Vec<&String> = y.keys().collect();
                let next = xk.iter().zip(yk.iter()).find(|(k1, k2)| k1 != k2 || x.get(**k1) != y.get(**k2));
                match next {
                    Some((k1, k2)) if k1 == k2 => {
                        path.push_str(&format!(".{k1}"));
                        a = &x[k1.as_str()];
                        b = &y[k2.as_str()];
                    }
                    Some((k1, _)) => {
                        path.push_str(&format!(".{k1}"));
                        return (path, x.get(k1.as_str()), y.get(k1.as_str()));
                    }
                    None if xk.len() > yk.len() => {
                        path.push_str(&format!(".{}", xk[yk.len()]));
                        return (path, x.get(xk[yk.len()].as_str()), None);
                    }
                    None if yk.len() > xk.len() => {
                        path.push_str(&format!(".{}", yk[xk.len()]));
                        return (path, None, y.get(yk[xk.len()].as_str()));
                    }
                    None => return (path, Some(a), Some(b)),
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                let i = (0..x.len().min(y.len())).find(|&i| x[i] != y[i]).unwrap_or(x.len().min(y.len()));
                path.push_str(&format!("[{i}]"));
                match (x.get(i), y.get(i)) {
                    (Some(p), Some(q)) => {
                        a = p;
                        b = q;
                    }
                    (p, q) => return (path, p, q),
                }
            }
            _ => return (path, Some(a), Some(b)),
        }
    }
}

fn leaf_text(v: Option<&Value>) -> String {
    match v {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Common prefix length of two texts: (chars, bytes).
pub fn common_prefix(a: &str, b: &str) -> (usize, usize) {
    let mut chars = 0;
    let mut bytes = 0;
    for (x, y) in a.chars().zip(b.chars()) {
        if x != y {
            break;
        }
        chars += 1;
        bytes += x.len_utf8();
    }
    (chars, bytes)
}

/// Text around a byte position: EXCERPT chars before and after, marked with ellipses.
fn window(s: &str, byte: usize) -> String {
    let start = s[..byte].char_indices().rev().nth(EXCERPT - 1).map(|(i, _)| i).unwrap_or(0);
    let end = s[byte..].char_indices().nth(EXCERPT).map(|(i, _)| byte + i).unwrap_or(s.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&s[start..end]);
    if end < s.len() {
        out.push('…');
    }
    out
}

fn clip(s: &str, from_char: usize, n: usize) -> String {
    let t: String = s.chars().skip(from_char).take(n).collect();
    if s.chars().count() > from_char + n { format!("{t}…") } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(v: Value) -> Request {
        Request::parse(&v, None).unwrap()
    }

    #[test]
    fn divergence_names_path_offset_and_excerpt() {
        let a = req(
            json!({"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "You are helpful. Today is 2026-11-21."}], "messages": []}),
        );
        let b = req(
            json!({"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "You are helpful. Today is 2026-11-22."}], "messages": []}),
        );
        let d = first_divergence(&a, &b).unwrap();
        assert_eq!(d.level, Level::System);
        assert_eq!(d.path, "system[0].text");
        assert_eq!(d.char_offset, "You are helpful. Today is 2026-11-2".len());
        assert!(d.before.contains("21") && d.after.contains("22"));
    }

    #[test]
    fn append_only_has_no_divergence() {
        let a = req(json!({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}));
        let b = req(
            json!({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}),
        );
        assert_eq!(first_divergence(&a, &b), None);
    }

    #[test]
    fn leaf_diff_descends_into_schemas() {
        let a = json!({"name": "Read", "input_schema": {"properties": {"path": {"type": "string"}}}});
        let b = json!({"name": "Read", "input_schema": {"properties": {"path": {"type": "integer"}}}});
        let (p, _, _) = first_leaf_diff(&a, &b);
        assert_eq!(p, ".input_schema.properties.path.type");
    }
}
