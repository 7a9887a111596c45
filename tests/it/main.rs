//! refrain's integration tests: one binary, one module per area, driving the real `refrain` binary.

mod hook;
mod install;
