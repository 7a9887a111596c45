//! refrain's one integration test binary: drives the real `refrain` binary the way agents do.

// Test helpers outside #[test] functions may fail loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod adversarial;
mod agents;
mod browser;
mod bulk;
mod dedup;
mod embed_model;
mod fixtures;
mod hook;
mod http;
mod install;
mod ledger;
mod limits;
mod matching;
mod modules;
mod paths;
mod plan;
mod plan_accept;
mod plan_frame;
mod plan_match;
mod plan_own;
mod plan_rank;
mod plan_restraint;
mod plan_standalone;
mod prompt;
mod python_sdk;
mod report;
mod results;
mod robust;
mod security;
mod server;
mod support;
mod team;
mod terminal;
mod training;
mod trust;
mod verifier_model;
