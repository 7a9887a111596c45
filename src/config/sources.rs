//! Layering with figment: defaults < the user's `refrain.toml` < the project's `refrain.toml` and
//! `.refrain.toml` (screened by trust) < `REFRAIN_*` env < flags.
//!
//! figment rather than config-rs: every value figment merges keeps a tag naming the provider that
//! set it, so the per-key source report is `find_metadata` instead of bookkeeping of our own, and
//! a provider is a two-method trait, so each layer (a screened project file, one env var, one
//! flag) is its own provider named after its source. It is used without features: files are
//! parsed with the `toml` crate refrain already uses, so the project file can be screened as a
//! table before it becomes a layer.

use super::dotted;
use super::screen::screen;
use super::trust::{TrustDb, digest};
use super::{Config, Error, Overrides};
use figment::value::{Dict, Map};
use figment::{Figment, Metadata, Profile, Provider, providers::Serialized};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// The user's own config file.
    File(PathBuf),
    /// A project's config file; `true` when the user trusted its exact content.
    Project(PathBuf, bool),
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
            Source::Project(p, false) => write!(f, "project file {}", p.display()),
            Source::Project(p, true) => write!(f, "trusted project file {}", p.display()),
            Source::Env(v) => write!(f, "env {v}"),
            Source::Flag(v) => write!(f, "flag {v}"),
        }
    }
}

/// A project config file as read, and whether the user trusted this content.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    /// The file.
    pub path: PathBuf,
    /// Hex sha256 of its content.
    pub sha256: String,
    /// Whether `refrain trust` covers exactly this content.
    pub trusted: bool,
}

/// The resolved configuration, the source of every leaf value, and what was refused.
#[derive(Debug, Clone)]
pub struct Sourced {
    /// The merged configuration (its `refused` lists the settings project files were denied).
    pub config: Config,
    /// Dotted key -> (value as TOML, where it came from).
    pub sources: BTreeMap<String, (String, Source)>,
    /// The project's config files found.
    pub project_files: Vec<ProjectFile>,
}

/// Env vars with a fixed meaning; `REFRAIN__SECTION__KEY` reaches any other key.
const NAMED_ENV: &[(&str, &str)] = &[
    ("REFRAIN_HOME", "store.home"),
    ("REFRAIN_TOKEN", "server.token"),
    ("REFRAIN_MODEL_DIR", "model.dir"),
    ("REFRAIN_ORT_LIB", "model.runtime"),
    ("REFRAIN_LOG_FILE", "server.log_file"),
];

/// One layer: a table and the source named in reports and errors.
struct Layer {
    source: Source,
    table: Table,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.source.to_string())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Serialized::defaults(&self.table).data()
    }
}

pub(super) fn resolve(project_root: Option<&Path>, flags: &Overrides) -> Result<Sourced, Error> {
    let defaults = Value::try_from(Config::default())
        .map_err(|e| Error::Invalid { origin: "defaults".into(), message: e.to_string() })?;
    let defaults = Layer { source: Source::Default, table: defaults.as_table().cloned().unwrap_or_default() };
    let mut user = Vec::new();
    if let Some(path) = user_file().filter(|p| p.is_file()) {
        let (_, table) = read_table(&path)?;
        user.push(Layer { source: Source::File(path), table });
    }
    let late: Vec<Layer> = env_layers().into_iter().chain(flag_layers(flags)).collect();
    for layer in user.iter().chain(&late) {
        super::removed::check(&layer.table, &layer.source.to_string())?;
    }

    // What the user's own settings give, before any project file: the home (where trust records
    // live) and the values a project may only lower.
    let mine = stack(&defaults, &user, &[], &late);
    let user_config: Config = extract(&mine)?;
    let mine_table: Table = mine.extract().unwrap_or_default();
    let base = |key: &str| dotted::get(&mine_table, key).cloned();

    let (mut project, mut refused, mut files) = (Vec::new(), Vec::new(), Vec::new());
    if let Some(root) = project_root {
        let trust = TrustDb::load(&user_config.home())?;
        for path in project_files(root) {
            let (sha256, table) = read_table(&path)?;
            super::removed::check(&table, &Source::Project(path.clone(), false).to_string())?;
            let trusted = trust.allows(&path, &sha256);
            let (kept, denied) = screen(table, &path, trusted, base);
            refused.extend(denied);
            project.push(Layer { source: Source::Project(path.clone(), trusted), table: kept });
            files.push(ProjectFile { path, sha256, trusted });
        }
    }
    let figment = stack(&defaults, &user, &project, &late);
    let mut config: Config = extract(&figment)?;
    config.refused = refused;
    let sources = report(&figment, [&defaults].into_iter().chain(&user).chain(&project).chain(&late));
    Ok(Sourced { config, sources, project_files: files })
}

/// The project's config files that exist, in the order they apply.
pub fn project_files(root: &Path) -> Vec<PathBuf> {
    [root.join("refrain.toml"), root.join(".refrain.toml")].into_iter().filter(|p| p.is_file()).collect()
}

/// Reads and parses a config file; its content digest and table (one read, so what is hashed is
/// what is parsed).
pub fn read_table(path: &Path) -> Result<(String, Table), Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
    let text = String::from_utf8_lossy(&bytes);
    let table = text
        .parse::<Table>()
        .map_err(|e| Error::Invalid { origin: path.display().to_string(), message: e.to_string() })?;
    Ok((digest(&bytes), table))
}

/// The user's own config file: `REFRAIN_CONFIG`, else `refrain.toml` in the user's config dir.
pub fn user_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REFRAIN_CONFIG") {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("dev", "refrain", "refrain").map(|d| d.config_dir().join("refrain.toml"))
}

fn stack(defaults: &Layer, user: &[Layer], project: &[Layer], late: &[Layer]) -> Figment {
    let mut f = Figment::from(defaults);
    for layer in user.iter().chain(project).chain(late) {
        f = f.merge(layer);
    }
    f
}

fn extract(figment: &Figment) -> Result<Config, Error> {
    figment.extract().map_err(|e| Error::Invalid { origin: "the configuration".into(), message: e.to_string() })
}

fn env_layers() -> Vec<Layer> {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    vars.sort();
    vars.into_iter()
        .filter_map(|(var, raw)| {
            let key = env_key(&var)?;
            let mut table = Table::new();
            dotted::set(&mut table, &key, parse_scalar(&raw));
            Some(Layer { source: Source::Env(var), table })
        })
        .collect()
}

fn flag_layers(flags: &Overrides) -> Vec<Layer> {
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    [
        ("--home", "store.home", path(&flags.home)),
        ("--log-file", "server.log_file", path(&flags.log_file)),
        ("--token", "server.token", flags.token.clone()),
        ("--model-dir", "model.dir", path(&flags.model_dir)),
    ]
    .into_iter()
    .filter_map(|(flag, key, value)| {
        let mut table = Table::new();
        dotted::set(&mut table, key, Value::String(value?));
        Some(Layer { source: Source::Flag(flag.into()), table })
    })
    .collect()
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

/// Every leaf of the merged configuration with its value and the layer that set it.
fn report<'a>(figment: &Figment, layers: impl Iterator<Item = &'a Layer>) -> BTreeMap<String, (String, Source)> {
    let by_name: BTreeMap<String, Source> = layers.map(|l| (l.source.to_string(), l.source.clone())).collect();
    let merged: Table = figment.extract().unwrap_or_default();
    let mut leaves = Vec::new();
    leaves_of(&merged, "", &mut leaves);
    leaves
        .into_iter()
        .map(|(key, value)| {
            let source = figment
                .find_metadata(&key)
                .and_then(|m| by_name.get(m.name.as_ref()))
                .cloned()
                .unwrap_or(Source::Default);
            let shown = if key.ends_with("token") {
                "\"<redacted>\"".to_string()
            } else if key == "team.url" {
                hide_password(&value.to_string())
            } else {
                value.to_string()
            };
            (key, (shown, source))
        })
        .collect()
}

/// A URL with its password (`user:password@`) replaced, for reports.
pub fn hide_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:<redacted>{}", &url[..s + 3], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

fn leaves_of(table: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in table {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(t) if !t.is_empty() => leaves_of(t, &key, out),
            other => out.push((key, other.clone())),
        }
    }
}

#[cfg(test)]
mod tests;
