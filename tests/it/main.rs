//! The one integration test binary: drives the real `refrain` binary the way clients do.

mod http;
mod python_sdk;
