//! Layer merging: defaults < user `refrain.toml` < project `refrain.toml` < env < flags.
//!
//! Every leaf value remembers which layer set it, so `refrain config` can say where it came from.

use super::{Config, Error, Overrides};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// A config file.
    File(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::File(p) => write!(f, "file {}", p.display()),
            Source::Env(v) => write!(f, "env {v}"),
            Source::Flag(v) => write!(f, "flag {v}"),
        }
    }
}

/// The resolved configuration and the source of every leaf value.
#[derive(Debug, Clone)]
pub struct Sourced {
    /// The merged configuration.
    pub config: Config,
    /// Dotted key -> (value as TOML, where it came from).
    pub sources: BTreeMap<String, (String, Source)>,
}

/// Env vars with a fixed meaning; `REFRAIN__SECTION__KEY` reaches any other key.
const NAMED_ENV: &[(&str, &str)] = &[
    ("REFRAIN_HOME", "store.home"),
    ("REFRAIN_TOKEN", "server.token"),
    ("REFRAIN_MODEL_DIR", "model.dir"),
    ("REFRAIN_ORT_LIB", "model.runtime"),
    ("REFRAIN_LOG_FILE", "server.log_file"),
];

pub(super) fn resolve(project_root: Option<&Path>, flags: &Overrides) -> Result<Sourced, Error> {
    let defaults = Value::try_from(Config::default())
        .map_err(|e| Error::Invalid { origin: "defaults".into(), message: e.to_string() })?;
    let mut merged = defaults.as_table().cloned().unwrap_or_default();
    let mut sources = BTreeMap::new();
    record(&merged, "", &Source::Default, &mut sources);

    for path in config_files(project_root) {
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
        let table: Table = text.parse().map_err(|e: toml::de::Error| Error::Invalid {
            origin: path.display().to_string(),
            message: e.to_string(),
        })?;
        overlay(&mut merged, &table, "", &Source::File(path.clone()), &mut sources);
    }
    for (var, value) in std::env::vars() {
        if let Some(key) = env_key(&var) {
            set(&mut merged, &key, parse_scalar(&value), Source::Env(var.clone()), &mut sources);
        }
    }
    let flag_values = [
        ("--home", "store.home", flags.home.as_ref().map(|p| p.display().to_string())),
        ("--log-file", "server.log_file", flags.log_file.as_ref().map(|p| p.display().to_string())),
        ("--token", "server.token", flags.token.clone()),
        ("--model-dir", "model.dir", flags.model_dir.as_ref().map(|p| p.display().to_string())),
    ];
    for (flag, key, value) in flag_values {
        if let Some(v) = value {
            set(&mut merged, key, Value::String(v), Source::Flag(flag.into()), &mut sources);
        }
    }
    let config: Config = Value::Table(merged).try_into().map_err(|e: toml::de::Error| Error::Invalid {
        origin: "merged configuration".into(),
        message: e.to_string(),
    })?;
    Ok(Sourced { config, sources })
}

/// The user file, then the project file (later files win).
fn config_files(project_root: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(p) = std::env::var("REFRAIN_CONFIG") {
        files.push(PathBuf::from(p));
    } else if let Some(dirs) = directories::ProjectDirs::from("dev", "refrain", "refrain") {
        files.push(dirs.config_dir().join("refrain.toml"));
    }
    if let Some(root) = project_root {
        files.push(root.join("refrain.toml"));
        files.push(root.join(".refrain.toml"));
    }
    files
}

fn env_key(var: &str) -> Option<String> {
    if let Some((_, key)) = NAMED_ENV.iter().find(|(name, _)| *name == var) {
        return Some((*key).to_string());
    }
    let rest = var.strip_prefix("REFRAIN__")?;
    Some(rest.split("__").map(str::to_ascii_lowercase).collect::<Vec<_>>().join("."))
}

/// Env values are TOML scalars when they parse as one (`true`, `3`, `[..]`), else strings.
fn parse_scalar(raw: &str) -> Value {
    format!("v = {raw}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_string()))
}

fn overlay(base: &mut Table, top: &Table, prefix: &str, src: &Source, out: &mut BTreeMap<String, (String, Source)>) {
    for (k, v) in top {
        let path = join(prefix, k);
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(t)) => overlay(b, t, &path, src, out),
            _ => {
                base.insert(k.clone(), v.clone());
                record_value(v, &path, src, out);
            }
        }
    }
}

fn set(base: &mut Table, dotted: &str, value: Value, src: Source, out: &mut BTreeMap<String, (String, Source)>) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut table = base;
    for part in parts {
        let entry = table.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(t) = entry else { return };
        table = t;
    }
    record_value(&value, dotted, &src, out);
    table.insert(last.to_string(), value);
}

fn record(table: &Table, prefix: &str, src: &Source, out: &mut BTreeMap<String, (String, Source)>) {
    for (k, v) in table {
        record_value(v, &join(prefix, k), src, out);
    }
}

fn record_value(v: &Value, path: &str, src: &Source, out: &mut BTreeMap<String, (String, Source)>) {
    match v {
        Value::Table(t) => record(t, path, src, out),
        other => {
            let shown = if path.ends_with("token") { "\"<redacted>\"".to_string() } else { other.to_string() };
            out.insert(path.to_string(), (shown, src.clone()));
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_keys_map_to_dotted_paths() {
        assert_eq!(env_key("REFRAIN_HOME").as_deref(), Some("store.home"));
        assert_eq!(env_key("REFRAIN__RESULTS__DEFAULT_TTL_SECS").as_deref(), Some("results.default_ttl_secs"));
        assert_eq!(env_key("HOME"), None);
    }

    #[test]
    fn env_scalars_parse_as_toml_when_they_can() {
        assert_eq!(parse_scalar("42"), Value::Integer(42));
        assert_eq!(parse_scalar("true"), Value::Boolean(true));
        assert_eq!(parse_scalar("/tmp/x"), Value::String("/tmp/x".into()));
    }

    #[test]
    fn project_file_overrides_default_and_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("refrain.toml"), "[results]\ndefault_ttl_secs = 60\n").unwrap();
        let s = resolve(Some(dir.path()), &Overrides::default()).unwrap();
        assert_eq!(s.config.results.default_ttl_secs, 60);
        let (_, src) = &s.sources["results.default_ttl_secs"];
        assert!(matches!(src, Source::File(_)));
    }

    #[test]
    fn unknown_keys_are_rejected_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("refrain.toml"), "[results]\nbogus = 1\n").unwrap();
        let err = resolve(Some(dir.path()), &Overrides::default()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("bogus"), "{err}");
    }
}
