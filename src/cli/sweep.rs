//! The sweep's memory: what each transcript under the known roots was (its length and
//! modification time) when the last sweep captured it or left it out, kept in the ledger
//! beside the capture cursors. A sweep then reads only the files that changed since: a root
//! with nothing new costs a stat of each file, not an open, a cursor lookup and a read.
//!
//! A file is settled only once its capture succeeded (or it was found to be no transcript,
//! or another project's): one that failed is tried again by the next sweep. Its print is
//! taken before it is read, so a file that grew during its capture differs next time and is
//! read again from its cursor.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::capture::CaptureError;
use crate::cli::transcripts::Found;
use crate::ledger::{Ledger, LedgerError, WriteSet};
use crate::redact::StoreRedactor;

/// The cursor key the sweep's memory is kept under: no transcript path starts with it.
const KEY: &str = "peat:sweep";

/// What a file was when it was last swept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Print {
    len: u64,
    /// Nanoseconds since the epoch (0 where the platform gives no modification time).
    mtime: i128,
    /// A database's write-ahead log, where it has one (its length and time): a harness's
    /// writes land there, and the database file stays as it was until a checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wal: Option<(u64, i128)>,
}

impl Print {
    /// The print of `file`, stat-ed now; a `.db` file's `-wal` beside it is stat-ed too.
    fn of(file: &Path) -> std::io::Result<Print> {
        let stat = |meta: std::fs::Metadata| {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            (meta.len(), mtime)
        };
        let (len, mtime) = stat(std::fs::metadata(file)?);
        let wal = if file.extension().is_some_and(|e| e == "db") {
            let mut wal = file.as_os_str().to_owned();
            wal.push("-wal");
            std::fs::metadata(wal).ok().map(stat)
        } else {
            None
        };
        Ok(Print { len, mtime, wal })
    }
}

/// What the sweeps remember: the files captured (or found to be no transcript), and apart
/// from them the files left out as other projects' (which `peat import --all` still reads).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Memory {
    settled: BTreeMap<String, Print>,
    #[serde(default)]
    left_out: BTreeMap<String, Print>,
}

/// The prints the last sweeps settled, and those of the files this sweep is about to read.
#[derive(Debug, Default)]
pub(crate) struct Index {
    memory: Memory,
    pending: HashMap<PathBuf, Print>,
    changed: bool,
}

impl Index {
    /// The ledger's memory of the last sweep; none (every file read) when it is missing or
    /// unreadable.
    pub(crate) fn load(ledger: &Ledger) -> Result<Index, LedgerError> {
        let memory = ledger
            .cursor(KEY)?
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(Index {
            memory,
            ..Index::default()
        })
    }

    /// The files of `found` that changed since they were settled (or were never seen; with
    /// `all`, also those left out as other projects'), each stat taken now. A file that
    /// cannot be stat-ed is kept: its capture says why.
    pub(crate) fn changed(&mut self, found: Found, all: bool) -> Found {
        let files = found
            .files
            .into_iter()
            .filter(|f| {
                let Ok(print) = Print::of(f) else {
                    return true;
                };
                let k = key(f);
                let left_out = !all && self.memory.left_out.get(&k) == Some(&print);
                if left_out || self.memory.settled.get(&k) == Some(&print) {
                    return false;
                }
                self.pending.insert(f.clone(), print);
                true
            })
            .collect();
        Found {
            files,
            unreadable: found.unreadable,
        }
    }

    /// `file` is done with: captured, or no transcript.
    pub(crate) fn settle(&mut self, file: &Path) {
        if let Some(print) = self.pending.remove(file) {
            self.memory.left_out.remove(&key(file));
            self.memory.settled.insert(key(file), print);
            self.changed = true;
        }
    }

    /// `file` is another project's: not read again until it changes, unless asked for all.
    pub(crate) fn leave_out(&mut self, file: &Path) {
        if let Some(print) = self.pending.remove(file) {
            self.memory.left_out.insert(key(file), print);
            self.changed = true;
        }
    }

    /// Keep what was settled, in one write, when anything was.
    pub(crate) fn save(
        self,
        ledger: &mut Ledger,
        redactor: &StoreRedactor,
    ) -> Result<(), CaptureError> {
        if !self.changed {
            return Ok(());
        }
        let mut set = WriteSet {
            cursor: Some((
                KEY.to_string(),
                serde_json::to_vec(&self.memory).unwrap_or_default(),
            )),
            ..WriteSet::default()
        };
        crate::redact::apply::write_set(redactor.get()?, &mut set);
        ledger.write(set)?;
        Ok(())
    }
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_file_that_changed_since_it_was_settled_is_read_again() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a.jsonl");
        let b = t.path().join("b.jsonl");
        std::fs::write(&a, "{}\n").unwrap();
        std::fs::write(&b, "{}\n").unwrap();
        let found = || Found {
            files: vec![a.clone(), b.clone()],
            unreadable: Vec::new(),
        };
        let mut index = Index::default();
        assert_eq!(
            index.changed(found(), false).files,
            vec![a.clone(), b.clone()]
        );
        index.settle(&a);
        // `b` was not settled (its capture failed): it is read again.
        assert_eq!(index.changed(found(), false).files, vec![b.clone()]);
        std::fs::write(&a, "{}\n{}\n").unwrap();
        assert_eq!(
            index.changed(found(), false).files,
            vec![a.clone(), b.clone()]
        );
        assert!(index.changed);
    }

    #[test]
    fn a_database_whose_write_ahead_log_grew_is_read_again() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("sessions.db");
        std::fs::write(&db, "SQLite").unwrap();
        let found = || Found {
            files: vec![db.clone()],
            unreadable: Vec::new(),
        };
        let mut index = Index::default();
        index.changed(found(), false);
        index.settle(&db);
        assert!(index.changed(found(), false).files.is_empty());
        // The harness wrote: the log beside the database grew, the database did not.
        std::fs::write(t.path().join("sessions.db-wal"), "frames").unwrap();
        assert_eq!(index.changed(found(), false).files, vec![db.clone()]);
    }

    #[test]
    fn a_file_left_out_as_another_projects_is_read_again_only_for_all() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a.jsonl");
        std::fs::write(&a, "{}\n").unwrap();
        let found = || Found {
            files: vec![a.clone()],
            unreadable: Vec::new(),
        };
        let mut index = Index::default();
        index.changed(found(), false);
        index.leave_out(&a);
        assert!(index.changed(found(), false).files.is_empty());
        assert_eq!(index.changed(found(), true).files, vec![a.clone()]);
        index.settle(&a);
        assert!(index.changed(found(), false).files.is_empty());
        assert!(index.changed(found(), true).files.is_empty());
    }
}
