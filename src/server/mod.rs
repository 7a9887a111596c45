//! Transports and process roles: the MCP handler every transport serves, the link to the store
//! (owned here or reached through the owner process), stdio, streamable HTTP and legacy SSE.
//!
//! Only this module and `tools` know rmcp.

pub mod handler;
pub mod http;
pub mod link;
pub mod owner;
pub mod pipes;
pub mod relay;
pub mod run;
pub mod stdio;
pub mod stdout;

pub use handler::Handler;
pub use link::{Establishing, Link};
