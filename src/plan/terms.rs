//! The words of stored tasks, kept as postings (`PLAN_TERMS`: term -> plan ids), so a lookup finds
//! the stored tasks that share a task's rarer words anywhere in the library, not only among its
//! nearest embeddings. The embedding of a masked task often puts a task's own family beyond its
//! nearest few ("make get_user_by_id be called find_user" is far from "rename fn run_server to
//! serve"), while the family's words (`eslint`, `values.yaml`, `console script`) are shared.
//!
//! Such candidates are only ever suggested, never served: they go through the same gates as the
//! others, and only the nearest by embedding may be served. A term held by more than `COMMON`
//! plans says little about any one of them: its record only says so, so a lookup reads at most
//! `COMMON` ids per word of the task, in one record. Plans stored before this index existed are found as
//! before (embedding, bucket, same text) until stored again.

use super::Error;
use super::lexical;
use crate::store::{Key, Store, trees};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// A term held by more plans than this is too common to find a candidate by.
const COMMON: usize = 64;
/// Terms kept per task (its first distinct ones).
const MAX_TERMS: usize = 48;
/// Longest term kept, in bytes (a longer one is a value nobody types twice).
const MAX_TERM_BYTES: usize = 64;

/// The plans a term is filed under: their ids, until more than `COMMON` hold it; then only that
/// it is common (it finds nothing, and is never listed again). One record per term keeps the
/// store small: a record per (term, plan) cost more on disk than the plans' own records.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Postings {
    ids: Vec<String>,
    common: bool,
}

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

fn key(term: &str) -> Vec<u8> {
    Key::new().text(term).into_bytes()
}

/// Files a plan's task under its terms.
pub fn write(store: &Store, id: &str, task: &str) -> Result<(), Error> {
    write_many(store, &[(id, task)])
}

/// Files several plans under their terms, one update per term. A term that already holds them
/// (every later write of a stored plan: feedback, counters) is only read, never rewritten.
pub fn write_many(store: &Store, plans: &[(&str, &str)]) -> Result<(), Error> {
    let mut by_term: HashMap<String, Vec<&str>> = HashMap::new();
    for (id, task) in plans {
        for t in of(task) {
            by_term.entry(t).or_default().push(id);
        }
    }
    for (term, ids) in by_term {
        let filed = store.get::<Postings>(trees::PLAN_TERMS, &key(&term))?;
        if filed.is_some_and(|p| p.common || ids.iter().all(|id| p.ids.iter().any(|x| x == id))) {
            continue;
        }
        store.update(trees::PLAN_TERMS, &key(&term), |old: Option<Postings>| {
            let mut p = old.unwrap_or_default();
            if p.common {
                return None;
            }
            let before = p.ids.len();
            for id in &ids {
                if !p.ids.iter().any(|x| x == id) {
                    p.ids.push((*id).to_string());
                }
            }
            if p.ids.len() > COMMON {
                p = Postings { ids: Vec::new(), common: true };
            } else if p.ids.len() == before {
                return None;
            }
            Some(p)
        })?;
    }
    Ok(())
}

/// Removes a plan from its terms' postings.
pub fn remove(store: &Store, id: &str, task: &str) -> Result<(), Error> {
    for t in of(task) {
        store.update(trees::PLAN_TERMS, &key(&t), |old: Option<Postings>| {
            let mut p = old?;
            let before = p.ids.len();
            p.ids.retain(|x| x != id);
            (p.ids.len() != before).then_some(p)
        })?;
    }
    Ok(())
}

/// The ids of up to `limit` stored plans that share the most telling words with `task`, best
/// first: each shared term weighs more the fewer plans hold it (`ln(1 + COMMON / holders)`).
pub fn sharing(store: &Store, task: &str, limit: usize) -> Result<Vec<String>, Error> {
    let mut score: HashMap<String, f32> = HashMap::new();
    for t in of(task) {
        let Some(p) = store.get::<Postings>(trees::PLAN_TERMS, &key(&t))? else { continue };
        if p.common || p.ids.is_empty() {
            continue;
        }
        let weight = (1.0 + COMMON as f32 / p.ids.len() as f32).ln();
        for id in p.ids {
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
        write_many(&store, &[("c", "add the serde dependency to Cargo.toml")]).expect("write");
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
