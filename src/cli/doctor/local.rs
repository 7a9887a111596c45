//! The checks about this project and this user's settings: the store's size and limit, project
//! settings refused, and whether the team library's database answers.

use super::Check;
use crate::config::Config;
use crate::project::Project;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

/// How long the team library's database gets to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The current project's store: where, how big, against `store.max_store_bytes`.
pub fn store(project: &Project, config: &Config) -> Check {
    let db = project.db_dir();
    if !db.exists() {
        return Check::ok(
            "store",
            format!(
                "no store yet for {} (the first session creates it in {})",
                project.root.display(),
                project.dir.display()
            ),
        );
    }
    if let Err(e) = std::fs::read_dir(&db) {
        let fix = format!("check the permissions of {} (it must be yours and readable)", db.display());
        return Check::problem("store", format!("cannot read the store {}: {e}", db.display()), fix);
    }
    let size = dir_size(&project.dir);
    let limit = config.store.max_store_bytes;
    let what = format!("{} for {} in {}", mb(size), project.root.display(), project.dir.display());
    if limit > 0 && size.saturating_mul(10) > limit.saturating_mul(9) {
        let fix = "raise store.max_store_bytes in your refrain.toml, or evict old plans with refrain plans evict";
        return Check::warn("store", format!("{what}, near store.max_store_bytes ({})", mb(limit)), Some(fix.into()));
    }
    Check::ok("store", what)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// Each project setting refused, as `refrain config` lists them (the reason says how to allow it).
pub fn refused(config: &Config) -> Vec<Check> {
    if config.refused.is_empty() {
        return vec![Check::ok("config", "no project setting refused")];
    }
    config.refused.iter().map(|r| Check::warn("config", r.to_string(), None)).collect()
}

/// Whether the team library's database accepts a connection (when `team.url` is set).
pub fn team(config: &Config) -> Check {
    let Some(url) = &config.team.url else { return Check::ok("team", "team library off (team.url is not set)") };
    let parsed: tokio_postgres::Config = match url.parse() {
        Ok(c) => c,
        Err(e) => {
            return Check::problem("team", format!("team.url is not a PostgreSQL URL: {e}"), "refrain team status");
        }
    };
    let ports = parsed.get_ports();
    let mut tried = Vec::new();
    for (i, host) in parsed.get_hosts().iter().enumerate() {
        let tokio_postgres::config::Host::Tcp(name) = host else { continue };
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        match connect(name, port) {
            Ok(()) => return Check::ok("team", format!("team library reachable at {name}:{port}")),
            Err(e) => tried.push(format!("{name}:{port} ({e})")),
        }
    }
    if tried.is_empty() {
        return Check::ok("team", "team library on a local socket (not checked)");
    }
    let what = format!("cannot reach the team library: {}", tried.join(", "));
    Check::problem("team", what, "refrain team status (it says what is wrong with the database or the settings)")
}

fn connect(host: &str, port: u16) -> std::io::Result<()> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the name resolves to no address");
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = e,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::doctor::Status;

    fn with_url(url: &str) -> Config {
        let mut config = Config::default();
        config.team.url = Some(url.to_string());
        config
    }

    #[test]
    fn the_team_database_is_reachable_only_when_something_listens_there() {
        assert_eq!(team(&Config::default()).status, Status::Ok, "off is fine");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = team(&with_url(&format!("postgres://refrain@127.0.0.1:{port}/plans")));
        assert_eq!(up.status, Status::Ok, "{}", up.what);
        drop(listener);
        let down = team(&with_url(&format!("postgres://refrain@127.0.0.1:{port}/plans")));
        assert_eq!(down.status, Status::Problem, "{}", down.what);
        assert!(
            down.what.contains(&format!("127.0.0.1:{port}")) && down.fix.unwrap().starts_with("refrain team status")
        );
        assert_eq!(team(&with_url("not a url")).status, Status::Problem);
    }
}
