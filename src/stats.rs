//! Usage counters kept in the store: hits, misses, tokens saved, redactions, per area and per tool.
//!
//! Keys are `area/counter` or `area/counter/tool`; `cache_stats` reads them back grouped.

use crate::store::{self, Store, trees};
use std::collections::BTreeMap;

/// Adds `by` to a counter, in memory until the next batch or flush writes it (a crash may lose
/// the increments since then, never a stored entry).
pub fn bump(store: &Store, area: &str, counter: &str, tool: Option<&str>, by: u64) -> store::Result<()> {
    store.incr_batched(trees::STATS, format!("{area}/{counter}").as_bytes(), by)?;
    if let Some(t) = tool {
        store.incr_batched(trees::STATS, format!("{area}/{counter}/{t}").as_bytes(), by)?;
    }
    Ok(())
}

/// Every counter of an area: `counter` or `counter/tool` -> value.
pub fn read_area(store: &Store, area: &str) -> store::Result<BTreeMap<String, u64>> {
    store.write_counters()?;
    let prefix = format!("{area}/");
    let mut out = BTreeMap::new();
    for k in store.keys(trees::STATS, prefix.as_bytes())? {
        let v = store.counter(trees::STATS, &k)?;
        let name = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
        out.insert(name, v);
    }
    Ok(out)
}

/// Resets every counter of an area.
pub fn reset_area(store: &Store, area: &str) -> store::Result<()> {
    store.write_counters()?;
    for k in store.keys(trees::STATS, format!("{area}/").as_bytes())? {
        store.remove(trees::STATS, &k)?;
    }
    Ok(())
}
