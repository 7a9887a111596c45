//! The words of stored tasks, kept as postings (`PLAN_TERMS`: term + plan id), so a lookup finds
//! the stored tasks that share a task's rarer words anywhere in the library, not only among its
//! nearest embeddings. The embedding of a masked task often puts a task's own family beyond its
//! nearest few ("make get_user_by_id be called find_user" is far from "rename fn run_server to
//! serve"), while the family's words (`eslint`, `values.yaml`, `console script`) are shared.
//!
//! Such candidates are only ever suggested, never served: they go through the same gates as the
//! others, and only the nearest by embedding may be served. A term held by more than `COMMON`
//! plans says little about any one of them and is not read, so a lookup reads at most
//! `COMMON + 1` postings per word of the task. Plans stored before this index existed are found as
//! before (embedding, bucket, same text) until stored again.

use super::Error;
use super::lexical;
use crate::store::{Batch, Key, Store, trees};
use std::collections::{BTreeSet, HashMap};

/// A term held by more plans than this is too common to find a candidate by.
const COMMON: usize = 64;
/// Terms kept per task (its first distinct ones).
const MAX_TERMS: usize = 48;
/// Longest term kept, in bytes (a longer one is a value nobody types twice).
const MAX_TERM_BYTES: usize = 64;

/// The distinct terms a task is filed under.
pub fn of(task: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for t in lexical::terms(task) {
        if out.len() >= MAX_TERMS {
            break;
        }
        if t.len() <= MAX_TERM_BYTES {
            out.insert(t);
        }
    }
    out
}

fn key(term: &str, id: &str) -> Vec<u8> {
    Key::new().text(term).text(id).into_bytes()
}

/// Files a plan's task under its terms (buffered).
pub fn write(store: &Store, id: &str, task: &str) -> Result<(), Error> {
    for t in of(task) {
        store.put_bytes(trees::PLAN_TERMS, &key(&t, id), &[])?;
    }
    Ok(())
}

/// Adds a plan's term rows to a batch, as `write` writes them.
pub fn write_into(batch: &mut Batch, id: &str, task: &str) {
    for t in of(task) {
        batch.put_bytes(trees::PLAN_TERMS, &key(&t, id), &[]);
    }
}

/// Removes a plan's term rows.
pub fn remove(store: &Store, id: &str, task: &str) -> Result<(), Error> {
    for t in of(task) {
        store.remove(trees::PLAN_TERMS, &key(&t, id))?;
    }
    Ok(())
}

/// The ids of up to `limit` stored plans that share the most telling words with `task`, best
/// first: each shared term weighs more the fewer plans hold it (`ln(1 + COMMON / holders)`).
pub fn sharing(store: &Store, task: &str, limit: usize) -> Result<Vec<String>, Error> {
    let mut score: HashMap<String, f32> = HashMap::new();
    for t in of(task) {
        let prefix = Key::new().text(&t).into_bytes();
        let mut ids = Vec::new();
        store.scan_bytes(trees::PLAN_TERMS, &prefix, |k, _| {
            if let Some(id) = k.get(prefix.len()..).and_then(|r| r.strip_suffix(&[0])) {
                ids.push(String::from_utf8_lossy(id).into_owned());
            }
            ids.len() <= COMMON
        })?;
        if ids.is_empty() || ids.len() > COMMON {
            continue;
        }
        let weight = (1.0 + COMMON as f32 / ids.len() as f32).ln();
        for id in ids {
            *score.entry(id).or_default() += weight;
        }
    }
    let mut ranked: Vec<(String, f32)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(ranked.into_iter().take(limit).map(|(id, _)| id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_found_by_their_rarer_shared_words_and_forgotten_when_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        write(&store, "a", "eslint: enable the `no-console` rule").expect("write");
        write(&store, "b", "add a --verbose flag to backup.py").expect("write");
        let mut batch = Batch::new();
        write_into(&mut batch, "c", "add the serde dependency to Cargo.toml");
        store.apply(batch).expect("apply");
        assert_eq!(sharing(&store, "turn on eqeqeq in our eslint config", 3).expect("find"), ["a"]);
        assert_eq!(sharing(&store, "add tokio to Cargo.toml", 1).expect("find"), ["c"]);
        remove(&store, "a", "eslint: enable the `no-console` rule").expect("remove");
        assert!(sharing(&store, "eqeqeq in eslint", 3).expect("find").is_empty());
    }

    #[test]
    fn a_word_too_many_plans_hold_finds_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        for i in 0..=COMMON {
            write(&store, &format!("p{i}"), &format!("bump the widget{i} version")).expect("write");
        }
        assert!(sharing(&store, "widget version", 5).expect("find").is_empty(), "every plan says it");
        assert_eq!(sharing(&store, "widget7 version", 5).expect("find"), ["p7"]);
    }
}
