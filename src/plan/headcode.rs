//! The compact binary layout of a plan head, as a bucket row keeps it: no field names, lengths
//! as varints, types and roles as one byte. A lookup reads a bucket's heads in one range scan
//! and decodes each in a few hundred nanoseconds, where the JSON heads cost a parse of ~600
//! bytes each.
//!
//! Anything that does not decode (an older store's rows, a torn value) is `None`: the caller
//! rebuilds the head from the plan's record.

use super::head::{HEAD_VERSION, Head, HeadSlot};
use super::key::IntentKey;
use super::params::{ParamKind, Role};

/// First byte of a binary head (a JSON store value starts with the store's format version, 1).
const MAGIC: u8 = 0xB7;

const KINDS: [ParamKind; 12] = [
    ParamKind::Path,
    ParamKind::Identifier,
    ParamKind::Flag,
    ParamKind::Number,
    ParamKind::Version,
    ParamKind::Date,
    ParamKind::Url,
    ParamKind::String,
    ParamKind::Issue,
    ParamKind::Pr,
    ParamKind::Package,
    ParamKind::Any,
];
const ROLES: [Role; 3] = [Role::To, Role::From, Role::In];

/// Encodes a head; its bucket is not written (the row's key holds it).
pub fn encode(h: &Head) -> Vec<u8> {
    let mut w = Vec::with_capacity(256);
    w.push(MAGIC);
    w.push(h.version as u8);
    let flags = u8::from(h.side_effects) | u8::from(h.vector.is_some()) << 1 | u8::from(h.quarantined.is_some()) << 2;
    w.push(flags);
    w.extend_from_slice(&h.bias.to_le_bytes());
    if let Some(v) = h.vector {
        w.extend_from_slice(&v.to_le_bytes());
    }
    for s in [&h.id, &h.key.action, &h.key.kind, &h.task, &h.masked] {
        text(&mut w, s);
    }
    if let Some(q) = &h.quarantined {
        text(&mut w, q);
    }
    list(&mut w, &h.words);
    varint(&mut w, h.slots.len() as u64);
    for s in &h.slots {
        text(&mut w, &s.name);
        w.push(KINDS.iter().position(|k| *k == s.kind).unwrap_or(KINDS.len() - 1) as u8);
        let role = s.role.and_then(|r| ROLES.iter().position(|x| *x == r));
        let f = u8::from(s.required)
            | u8::from(s.default) << 1
            | u8::from(role.is_some()) << 2
            | u8::from(s.at.is_some()) << 3
            | u8::from(s.example.is_some()) << 4;
        w.push(f);
        if let Some(r) = role {
            w.push(r as u8);
        }
        if let Some(a) = s.at {
            varint(&mut w, a as u64);
        }
        if let Some(e) = &s.example {
            text(&mut w, e);
        }
    }
    list(&mut w, &h.constants);
    list(&mut w, &h.families);
    list(&mut w, &h.programs);
    w
}

/// Decodes a head of `bucket` written by `encode`; None for anything else (JSON heads, other
/// versions, truncated bytes).
pub fn decode(bytes: &[u8], bucket: &str) -> Option<Head> {
    let mut r = Reader(bytes);
    if r.byte()? != MAGIC || u32::from(r.byte()?) != HEAD_VERSION {
        return None;
    }
    let flags = r.byte()?;
    let bias = f32::from_le_bytes(r.take(4)?.try_into().ok()?);
    let vector = if flags & 2 != 0 { Some(u64::from_le_bytes(r.take(8)?.try_into().ok()?)) } else { None };
    let (id, action, kind, task, masked) = (r.text()?, r.text()?, r.text()?, r.text()?, r.text()?);
    let quarantined = if flags & 4 != 0 { Some(r.text()?) } else { None };
    let words = r.list()?;
    let n = r.count()?;
    let mut slots = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.text()?;
        let kind = *KINDS.get(r.byte()? as usize)?;
        let f = r.byte()?;
        let role = if f & 4 != 0 { Some(*ROLES.get(r.byte()? as usize)?) } else { None };
        let at = if f & 8 != 0 { Some(usize::try_from(r.varint()?).ok()?) } else { None };
        let example = if f & 16 != 0 { Some(r.text()?) } else { None };
        slots.push(HeadSlot { name, kind, required: f & 1 != 0, default: f & 2 != 0, role, at, example });
    }
    let (constants, families, programs) = (r.list()?, r.list()?, r.list()?);
    if !r.0.is_empty() {
        return None;
    }
    Some(Head {
        version: HEAD_VERSION,
        id,
        key: IntentKey { action, kind, bucket: bucket.to_string() },
        task,
        masked,
        words,
        slots,
        constants,
        families,
        programs,
        side_effects: flags & 1 != 0,
        quarantined,
        bias,
        vector,
    })
}

fn varint(w: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        w.push((n as u8) | 0x80);
        n >>= 7;
    }
    w.push(n as u8);
}

fn text(w: &mut Vec<u8>, s: &str) {
    varint(w, s.len() as u64);
    w.extend_from_slice(s.as_bytes());
}

fn list(w: &mut Vec<u8>, items: &[String]) {
    varint(w, items.len() as u64);
    items.iter().for_each(|s| text(w, s));
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn varint(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    /// A count of items, each at least one byte long, so a corrupt count cannot allocate more
    /// than the bytes left.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.0.len()).then_some(n)
    }

    fn text(&mut self) -> Option<String> {
        let n = usize::try_from(self.varint()?).ok()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }

    fn list(&mut self) -> Option<Vec<String>> {
        let n = self.count()?;
        (0..n).map(|_| self.text()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> Head {
        Head {
            version: HEAD_VERSION,
            id: "abc123".into(),
            key: IntentKey::new("add", "flag"),
            task: "add a `--verbose` flag to src/main.rs".into(),
            masked: "add a <flag> flag to <path>".into(),
            words: ["add", "a", "<flag>", "flag", "to", "<path>"].map(String::from).to_vec(),
            slots: vec![
                HeadSlot {
                    name: "flag".into(),
                    kind: ParamKind::Flag,
                    required: true,
                    default: false,
                    role: None,
                    at: Some(2),
                    example: Some("--verbose".into()),
                },
                HeadSlot {
                    name: "path".into(),
                    kind: ParamKind::Path,
                    required: false,
                    default: true,
                    role: Some(Role::To),
                    at: None,
                    example: None,
                },
            ],
            constants: vec!["release".into()],
            families: vec!["fs".into()],
            programs: vec!["cargo".into()],
            side_effects: true,
            quarantined: Some("3 failure(s) in a row".into()),
            bias: 0.15,
            vector: Some(1 << 40),
        }
    }

    #[test]
    fn a_head_comes_back_as_it_was_written_and_smaller_than_its_json() {
        let h = head();
        let bytes = encode(&h);
        assert_eq!(decode(&bytes, &h.key.bucket), Some(h.clone()));
        assert!(bytes.len() * 2 < serde_json::to_vec(&h).unwrap().len(), "{} bytes", bytes.len());
        let bare = Head { quarantined: None, vector: None, slots: vec![], ..h };
        assert_eq!(decode(&encode(&bare), &bare.key.bucket), Some(bare));
    }

    #[test]
    fn json_rows_truncated_or_padded_bytes_are_not_heads() {
        let bytes = encode(&head());
        assert_eq!(decode(b"\x01null", "b"), None);
        assert_eq!(decode(&[], "b"), None);
        for n in 0..bytes.len() {
            assert_eq!(decode(&bytes[..n], "b"), None, "cut at {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer, "b"), None);
    }
}
