//! refrain's integration tests: one binary, one module per area, driving the real `refrain` binary.

// Test helpers may unwrap: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod hook;
mod install;
