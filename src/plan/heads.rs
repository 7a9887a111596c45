//! Where plan heads live: each in its plan's bucket row (`PLAN_BUCKETS`, key bucket + id) in
//! the compact binary layout (`headcode`), so the heads of a bucket sit side by side and a
//! lookup reads the ones it considers in one short range scan; and a copy by id with its bucket
//! (`PLAN_HEADS`), for candidates found by id (neighbours, same text) in one read.
//!
//! Stores written before kept JSON heads in `PLAN_HEADS` by id and an empty bucket row: those
//! are read as they are, or rebuilt from the record, and rewritten in the new layout on first
//! read (when the store has room), so an older store migrates as it is used.

use super::Error;
use super::head::{HEAD_VERSION, Head};
use super::headcode;
use super::template::Record;
use crate::store::{Batch, Key, Store, trees};

/// First byte of a `PLAN_HEADS` value in the current layout: then the bucket's length (one
/// byte), the bucket, the binary head (older stores hold a JSON head there, whose first byte is
/// the store's format version).
const BY_ID: u8 = 0xB8;

/// The key of a plan's row in its bucket.
pub fn bucket_key(bucket: &str, id: &str) -> Vec<u8> {
    Key::new().text(bucket).text(id).into_bytes()
}

/// Writes a plan's head into its bucket row and its row by id (buffered).
pub fn write(store: &Store, h: &Head) -> Result<(), Error> {
    let (code, row) = rows(h);
    store.put_bytes(trees::PLAN_BUCKETS, &bucket_key(&h.key.bucket, &h.id), &code)?;
    store.put_bytes(trees::PLAN_HEADS, h.id.as_bytes(), &row)?;
    Ok(())
}

/// Adds a plan's head rows to a batch, as `write` writes them.
pub fn write_into(batch: &mut Batch, h: &Head) {
    let (code, row) = rows(h);
    batch.put_bytes(trees::PLAN_BUCKETS, &bucket_key(&h.key.bucket, &h.id), &code);
    batch.put_bytes(trees::PLAN_HEADS, h.id.as_bytes(), &row);
}

/// A head's bucket row value and its row by id.
fn rows(h: &Head) -> (Vec<u8>, Vec<u8>) {
    let code = headcode::encode(h);
    let b = h.key.bucket.as_bytes();
    let mut row = Vec::with_capacity(2 + b.len() + code.len());
    row.push(BY_ID);
    row.push(b.len().min(255) as u8);
    row.extend_from_slice(&b[..b.len().min(255)]);
    row.extend_from_slice(&code);
    (code, row)
}

/// The head in a `PLAN_HEADS` row of the current layout.
fn decode_by_id(row: &[u8]) -> Option<Head> {
    let (&n, rest) = row.strip_prefix(&[BY_ID])?.split_first()?;
    let (bucket, code) = rest.split_at_checked(usize::from(n))?;
    headcode::decode(code, std::str::from_utf8(bucket).ok()?)
}

/// The heads of the first `limit` plans of a bucket, in the bucket's order.
pub fn bucket(store: &Store, bucket: &str, limit: usize) -> Result<Vec<Head>, Error> {
    let prefix = Key::new().text(bucket).into_bytes();
    let mut rows: Vec<(String, Option<Head>)> = Vec::new();
    store.scan_bytes(trees::PLAN_BUCKETS, &prefix, |k, v| {
        if rows.len() >= limit {
            return false;
        }
        let id = String::from_utf8_lossy(&k[prefix.len()..k.len().saturating_sub(1)]).into_owned();
        let head = headcode::decode(v, bucket);
        rows.push((id, head));
        rows.len() < limit
    })?;
    let mut out = Vec::with_capacity(rows.len());
    for (id, head) in rows {
        match head {
            Some(h) => out.push(h),
            // A row of an older store: its head is read the old way and moved into the row.
            None => out.extend(by_id(store, &id)?),
        }
    }
    Ok(out)
}

/// A plan's head by id: from its row by id; from an older store's JSON head; else rebuilt from
/// the record. Heads not found in the current layout are written in it when there is room.
pub fn by_id(store: &Store, id: &str) -> Result<Option<Head>, Error> {
    let stored = store.get_bytes(trees::PLAN_HEADS, id.as_bytes())?;
    if let Some(h) = stored.as_deref().and_then(decode_by_id) {
        return Ok(Some(h));
    }
    let old = stored
        .filter(|b| b.first() != Some(&BY_ID))
        .and_then(|_| store.get::<Head>(trees::PLAN_HEADS, id.as_bytes()).ok().flatten())
        .filter(|h| h.version == HEAD_VERSION);
    let head = match old {
        Some(h) => h,
        None => {
            let Some(rec) = store.get::<Record>(trees::PLANS, id.as_bytes())? else { return Ok(None) };
            Head::of(&rec.plan, rec.vector)
        }
    };
    if store.check_room().is_ok() {
        write(store, &head)?;
    }
    Ok(Some(head))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::key::IntentKey;
    use crate::plan::library::put;
    use crate::plan::template::*;
    use serde_json::json;

    fn record(task: &str, n: u32) -> Record {
        let template: PlanTemplate = serde_json::from_value(json!({
            "steps": [{"tool": "Edit", "inputs": {"f": "{{params.path}}", "n": n}, "family": "fs"}],
            "slots": [{"name": "path", "type": "path"}]
        }))
        .unwrap();
        let plan = StoredPlan::for_test(task, IntentKey::new("update", "file"), template);
        Record { plan, vector: Some(u64::from(n)) }
    }

    /// Writes a plan the way stores before the binary heads did.
    fn put_old(store: &Store, rec: &Record, with_head: bool) {
        store.put(trees::PLANS, rec.plan.id.as_bytes(), rec).unwrap();
        if with_head {
            store.put(trees::PLAN_HEADS, rec.plan.id.as_bytes(), &Head::of(&rec.plan, rec.vector)).unwrap();
        }
        store.put(trees::PLAN_BUCKETS, &bucket_key(&rec.plan.key.bucket, &rec.plan.id), &()).unwrap();
    }

    #[test]
    fn a_bucket_reads_its_heads_in_order_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let recs: Vec<Record> = (0..5).map(|n| record(&format!("update src/f{n}.rs"), n)).collect();
        recs.iter().for_each(|r| put(&store, r).unwrap());
        let all = bucket(&store, &recs[0].plan.key.bucket, 10).unwrap();
        let mut ids: Vec<&str> = recs.iter().map(|r| r.plan.id.as_str()).collect();
        ids.sort();
        assert_eq!(all.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ids);
        assert_eq!(bucket(&store, &recs[0].plan.key.bucket, 2).unwrap().len(), 2);
        for r in &recs {
            assert_eq!(by_id(&store, &r.plan.id).unwrap(), Some(Head::of(&r.plan, r.vector)));
        }
        assert!(bucket(&store, "no-such-bucket", 10).unwrap().is_empty());
    }

    #[test]
    fn plans_sharing_a_masked_text_are_found_up_to_the_limit_and_the_own_text_always() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        // 40 plans whose tasks differ only by a path: one masked text.
        let recs: Vec<Record> = (0..40).map(|n| record(&format!("update src/f{n}.rs"), n)).collect();
        recs.iter().for_each(|r| put(&store, r).unwrap());
        let own = crate::plan::library::same_text(&store, "update src/f39.rs", 8).unwrap();
        assert_eq!(own.own, vec![recs[39].plan.id.clone()]);
        assert_eq!(own.masked.len(), 8, "{own:?}");
        assert!(!own.masked.contains(&recs[39].plan.id));
        let other = crate::plan::library::same_text(&store, "update lib/other.rs", 100).unwrap();
        assert!(other.own.is_empty());
        assert_eq!(other.masked.len(), 40);
    }

    #[test]
    fn an_older_stores_heads_are_read_and_moved_into_the_bucket_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (record("update src/a.rs", 1), record("update src/b.rs", 2));
        {
            let store = Store::open(dir.path()).unwrap();
            put_old(&store, &a, true);
            put_old(&store, &b, false);
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let want = |r: &Record| Head::of(&r.plan, r.vector);
        let mut heads = bucket(&store, &a.plan.key.bucket, 10).unwrap();
        heads.sort_by(|x, y| x.id.cmp(&y.id));
        let mut expect = vec![want(&a), want(&b)];
        expect.sort_by(|x, y| x.id.cmp(&y.id));
        assert_eq!(heads, expect);
        for r in [&a, &b] {
            let row = store.get_bytes(trees::PLAN_BUCKETS, &bucket_key(&r.plan.key.bucket, &r.plan.id)).unwrap();
            assert_eq!(row.and_then(|v| headcode::decode(&v, &r.plan.key.bucket)), Some(want(r)), "migrated");
            assert_eq!(by_id(&store, &r.plan.id).unwrap(), Some(want(r)));
        }
        assert_eq!(by_id(&store, "gone").unwrap(), None);
    }
}
