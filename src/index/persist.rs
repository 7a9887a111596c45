//! Saving and loading graph scopes, so a large index is not rebuilt from scratch at every start.
//!
//! Each graph scope is dumped with hnsw_rs's `file_dump` into its own directory (written beside
//! the old one and swapped in), and `manifest.json` records the highest vector id each dump holds.
//! On load, vectors stored after that id are inserted; ids deleted since are filtered by the live
//! set. Anything missing, unreadable or too stale falls back to a rebuild from the store.

use super::distance::UnitDot;
use super::graph::Graph;
use hnsw_rs::hnswio::HnswIo;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MANIFEST: &str = "manifest.json";
const FORMAT: u32 = 1;
const BASENAME: &str = "graph";

/// What each dumped scope holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    format: u32,
    /// scope -> dump description.
    scopes: BTreeMap<String, DumpInfo>,
}

/// One dumped scope.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DumpInfo {
    /// Directory name under the index dir.
    pub dir: String,
    /// Highest vector id in the dump.
    pub max_id: u64,
    /// Points in the dump.
    pub points: usize,
}

fn scope_dir_name(scope: &str) -> String {
    hex::encode(&Sha256::digest(scope.as_bytes())[..8])
}

/// Reads the manifest; a missing or unreadable one is empty.
pub fn read_manifest(dir: &Path) -> Manifest {
    std::fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
        .filter(|m| m.format == FORMAT)
        .unwrap_or_default()
}

/// Loads a scope's graph if the manifest has it. The loader is leaked on purpose: the graph
/// borrows it for the life of the process, and a process loads each scope at most once.
pub fn load(dir: &Path, manifest: &Manifest, scope: &str) -> Option<(Graph, DumpInfo)> {
    let info = manifest.scopes.get(scope)?.clone();
    let path = dir.join(&info.dir);
    if !path.join(format!("{BASENAME}.hnsw.graph")).exists() {
        return None;
    }
    let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(&path, BASENAME)));
    match io.load_hnsw::<f32, UnitDot>() {
        Ok(hnsw) => Some((Graph::from_hnsw(hnsw), info)),
        Err(e) => {
            tracing::warn!(scope, error = %e, "index dump unreadable; rebuilding from the store");
            None
        }
    }
}

/// Dumps the given scopes' graphs and rewrites the manifest (keeping other scopes' entries).
pub fn save(dir: &Path, graphs: &[(String, &Graph, u64)]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut manifest = read_manifest(dir);
    manifest.format = FORMAT;
    for (scope, graph, max_id) in graphs {
        let name = scope_dir_name(scope);
        let tmp: PathBuf = dir.join(format!("{name}.tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        graph.dump(&tmp, BASENAME).map_err(std::io::Error::other)?;
        let fin = dir.join(&name);
        let _ = std::fs::remove_dir_all(&fin);
        std::fs::rename(&tmp, &fin)?;
        manifest.scopes.insert(scope.clone(), DumpInfo { dir: name, max_id: *max_id, points: graph.len() });
    }
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, dir.join(MANIFEST))
}
