//! Where a store's bytes go: records and key + value bytes per sled tree, against the size sled
//! reports on disk (the difference is sled's own overhead: page headers, the log's free space,
//! snapshots).

use refrain::store::{Store, trees};
use std::path::Path;

/// One tree's share.
#[derive(Debug, Clone)]
pub struct Share {
    /// Tree name.
    pub tree: &'static str,
    /// Records.
    pub records: usize,
    /// Key plus value bytes.
    pub bytes: u64,
}

/// Opens the store in `dir` (waiting up to 30 s for a server that just exited to let go of it)
/// and sums every tree; returns the shares, biggest first, and sled's size on disk.
pub fn shares(dir: &Path) -> anyhow::Result<(Vec<Share>, u64)> {
    let store = Store::open_when_free(dir, std::time::Duration::from_secs(30)).map_err(|e| match e {
        refrain::store::Error::Locked { .. } => anyhow::anyhow!("store still locked 30 s after its server exited"),
        e => e.into(),
    })?;
    let mut out = Vec::new();
    for t in &trees::ALL {
        let (mut records, mut bytes) = (0usize, 0u64);
        store.for_each_bytes(*t, |k, v| {
            records += 1;
            bytes += (k.len() + v.len()) as u64;
        })?;
        if records > 0 {
            out.push(Share { tree: t.0, records, bytes });
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.bytes));
    Ok((out, store.size_on_disk()))
}
