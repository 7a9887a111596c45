//! The prompt hook stops offering near plans in a project whose agent does not take them.
//!
//! A block of near plans is context the agent did not ask for: it is sent again with every later
//! request of the session, whether the agent takes a plan from it or not. The agent is the judge
//! of whether a near plan is its task, and its judgement shows: a suggestion it takes is a
//! `plan_lookup` call with `plan_id`. So the hook offers blocks while the agent takes at least one
//! plan in every `hooks.suggest_per_take` blocks offered in the project: with none taken, the
//! first that many blocks are offered and then no more until the agent takes a plan (from
//! `plan_lookup`, which always shows near plans), and each plan taken earns as many again.
//! Verified hits are never held back, and `plan_lookup` called by the agent is unchanged.

use crate::stats;
use crate::store::{self, Store};

/// The stats area the counters live in.
const AREA: &str = "plans";
/// Blocks of near plans a hook added to an agent's context.
pub const BLOCKS: &str = "suggestion_blocks";
/// Suggested plans taken (filled, or asked for values).
const TAKEN: [&str; 2] = ["suggestions_accepted", "accepts_need_values"];

/// Counts a block of near plans a hook added.
pub fn offered(store: &Store) -> store::Result<()> {
    stats::bump(store, AREA, BLOCKS, None, 1)
}

/// Whether the hook should hold back its block now: `per_take` blocks (0: never hold back) have
/// been offered for every plan taken, plus one more round.
pub fn holds_back(store: &Store, per_take: u64) -> store::Result<bool> {
    if per_take == 0 {
        return Ok(false);
    }
    let counters = stats::read_area(store, AREA)?;
    let n = |k: &str| counters.get(k).copied().unwrap_or(0);
    let taken: u64 = TAKEN.iter().map(|k| n(k)).sum();
    Ok(exhausted(n(BLOCKS), taken, per_take))
}

/// The rule itself: blocks offered have used up what the plans taken earned.
fn exhausted(blocks: u64, taken: u64, per_take: u64) -> bool {
    per_take > 0 && blocks >= per_take.saturating_mul(taken.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_plan_taken_earns_another_round_of_blocks() {
        assert!(!exhausted(0, 0, 10));
        assert!(!exhausted(9, 0, 10), "the first ten blocks are offered with nothing taken");
        assert!(exhausted(10, 0, 10), "then none until a plan is taken");
        assert!(!exhausted(10, 1, 10), "a plan taken earns ten more");
        assert!(exhausted(20, 1, 10));
        assert!(!exhausted(1_000, 0, 0), "0 never holds back");
    }

    #[test]
    fn the_store_counts_blocks_offered_and_plans_taken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        for _ in 0..3 {
            offered(&store).expect("count");
        }
        assert!(holds_back(&store, 3).expect("read"));
        assert!(!holds_back(&store, 4).expect("read"));
        stats::bump(&store, AREA, "accepts_need_values", None, 1).expect("bump");
        assert!(!holds_back(&store, 3).expect("read"), "asking for values is taking the plan too");
    }
}
