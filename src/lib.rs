//! refrain: an MCP server that lets coding agents stop paying twice for the same work.
//!
//! The crate map, in dependency order (each layer uses only the ones below it):
//! - `server`, `cli`: transports (stdio, streamable HTTP, legacy SSE, the owner socket) and commands.
//! - `tools`: one file per MCP tool, each a thin adapter from typed params to the domain.
//! - domain: `plan`, `results`, `prompt`, `transcript`, `hooks` (agent hook handling),
//!   `integrate` (registration in agents' config files) and `report` (what the agents' history
//!   shows was wasted) — plain Rust, no rmcp types.
//! - `app`: the cheap-to-clone handle every tool receives.
//! - infrastructure: `store` (the only sled user), `index` (hnsw_rs), `embed` (fastembed),
//!   `verify` (the verification stage: exact text, gates, the cross-encoder, calibrated
//!   thresholds), `config`, `project`, `budget` (the per-request time and memory budget),
//!   `tokens` (the one tokenizer every count of what refrain adds and removes uses), `ledger`
//!   (each intervention's tokens removed and added, and the tool list's cost per request),
//!   `term` (text made safe for a terminal), `days` (the UTC date of a time).

pub mod app;
pub mod budget;
pub mod cli;
pub mod config;
pub mod confine;
pub mod days;
pub mod embed;
pub mod hooks;
pub mod index;
pub mod integrate;
pub mod ledger;
pub mod patterns;
pub mod plan;
pub mod project;
pub mod prompt;
pub mod report;
pub mod results;
pub mod server;
pub mod stats;
pub mod store;
pub mod team;
pub mod term;
pub mod threads;
pub mod tokens;
pub mod tools;
pub mod transcript;
pub mod verify;
