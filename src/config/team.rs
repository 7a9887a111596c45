//! Settings for the team plan library: a PostgreSQL database the team already runs, where plans
//! that worked are shared between members (see `crate::team`).
//!
//! Every key here is the user's alone: the URL says where task text goes, the password's env var
//! names a secret, the CA file is read from any path, and the publish count decides how soon plans
//! leave the machine. A project's config file may set none of them (`keys`).

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The team plan library.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TeamConfig {
    /// PostgreSQL connection URL (`postgres://user@host:5432/db?sslmode=require`); unset, plans
    /// stay on this machine. Put the password in the env var `password_env` names, not here.
    pub url: Option<String>,
    /// Name of the environment variable holding the database password (never the password).
    pub password_env: Option<String>,
    /// A PEM file of extra certificate authorities to trust for the database's TLS certificate
    /// (a team's private CA), besides the system's roots.
    pub ca_file: Option<PathBuf>,
    /// Local successes after which a plan is published to the team (`refrain plans publish`
    /// publishes at once).
    pub publish_after: u32,
}

impl Default for TeamConfig {
    fn default() -> Self {
        Self { url: None, password_env: None, ca_file: None, publish_after: 2 }
    }
}
