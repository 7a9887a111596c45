//! The user's trust records: which project config files the user allowed, each by path and the
//! sha256 of its exact content, kept in `trust.json` under refrain's home (the user's data dir).
//!
//! A record allows one content only: an edited file is untrusted again until the user runs
//! `refrain trust` once more. Nothing in a project can write here; the file is replaced
//! atomically (temp file, fsync, rename) so a crash never leaves half a record.

use super::Error;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name under refrain's home.
pub const FILE_NAME: &str = "trust.json";
const VERSION: u32 = 1;

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Hex sha256 of the content the user trusted.
    pub sha256: String,
    /// When, in ms since the Unix epoch.
    pub trusted_ms: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Doc {
    version: u32,
    files: BTreeMap<PathBuf, Record>,
}

/// The trust records of one refrain home.
#[derive(Debug)]
pub struct TrustDb {
    path: PathBuf,
    doc: Doc,
}

/// Hex sha256 of a file's bytes.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl TrustDb {
    /// Reads the records under `home` (none when the file does not exist yet).
    pub fn load(home: &Path) -> Result<TrustDb, Error> {
        let path = home.join(FILE_NAME);
        let doc = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Invalid {
                origin: path.display().to_string(),
                message: format!("{e}; delete it and run `refrain trust` again for the files you trust"),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Doc { version: VERSION, files: BTreeMap::new() },
            Err(source) => return Err(Error::Read { path, source }),
        };
        Ok(TrustDb { path, doc })
    }

    /// Whether the user trusted `file` with exactly this content digest.
    pub fn allows(&self, file: &Path, sha256: &str) -> bool {
        self.doc.files.get(file).is_some_and(|r| r.sha256 == sha256)
    }

    /// The record for `file`, whatever its content is now.
    pub fn get(&self, file: &Path) -> Option<&Record> {
        self.doc.files.get(file)
    }

    /// Every record, by path.
    pub fn records(&self) -> impl Iterator<Item = (&PathBuf, &Record)> {
        self.doc.files.iter()
    }

    /// Trusts `file` with this content digest (replacing an older record) and saves.
    pub fn trust(&mut self, file: &Path, sha256: &str) -> Result<(), Error> {
        let trusted_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        self.doc.files.insert(file.to_path_buf(), Record { sha256: sha256.to_string(), trusted_ms });
        self.save()
    }

    /// Forgets `file`; whether it was trusted. Saves.
    pub fn revoke(&mut self, file: &Path) -> Result<bool, Error> {
        let was = self.doc.files.remove(file).is_some();
        if was {
            self.save()?;
        }
        Ok(was)
    }

    fn save(&self) -> Result<(), Error> {
        let err = |source| Error::Read { path: self.path.clone(), source };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let doc = Doc { version: VERSION, files: self.doc.files.clone() };
        let text = serde_json::to_vec_pretty(&doc).map_err(|e| err(std::io::Error::other(e)))?;
        let tmp = self.path.with_extension("json.tmp");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp).map_err(err)?;
            f.write_all(&text).map_err(err)?;
            f.sync_all().map_err(err)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_allows_one_content_and_survives_a_reload() {
        let home = tempfile::tempdir().unwrap();
        let file = Path::new("/p/refrain.toml");
        let mut db = TrustDb::load(home.path()).unwrap();
        assert!(!db.allows(file, &digest(b"a = 1")));
        db.trust(file, &digest(b"a = 1")).unwrap();
        let db = TrustDb::load(home.path()).unwrap();
        assert!(db.allows(file, &digest(b"a = 1")));
        assert!(!db.allows(file, &digest(b"a = 2")), "an edited file is untrusted");
        assert!(!db.allows(Path::new("/q/refrain.toml"), &digest(b"a = 1")), "the same content elsewhere is not");
    }

    #[test]
    fn revoke_forgets_and_a_corrupt_file_is_an_error_saying_what_to_do() {
        let home = tempfile::tempdir().unwrap();
        let file = Path::new("/p/refrain.toml");
        let mut db = TrustDb::load(home.path()).unwrap();
        db.trust(file, "x").unwrap();
        assert!(db.revoke(file).unwrap());
        assert!(!db.revoke(file).unwrap());
        assert!(!TrustDb::load(home.path()).unwrap().allows(file, "x"));
        std::fs::write(home.path().join(FILE_NAME), "{not json").unwrap();
        let err = TrustDb::load(home.path()).unwrap_err().to_string();
        assert!(err.contains("run `refrain trust` again"), "{err}");
    }
}
