//! refrain's one integration test binary: drives the real `refrain` binary the way agents do.

mod prompt;
mod server;
mod support;
