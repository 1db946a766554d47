//! Rewriting a fjall database into a fresh one, so no old byte survives on disk.
//!
//! fjall keeps what was overwritten in older tables until compaction reaches them, and
//! keeps every write in its active journal until that grows past 64 MB. Neither is a place a
//! redacted secret may linger. So `peat redact` copies each keyspace's live entries (through
//! a transform) into a new database by ingestion (straight into tables: the new journal is
//! empty), then swaps the directories and deletes the old one whole.
//!
//! The swap is two renames; [`recover`] finishes or undoes one that a crash interrupted:
//! `<dir>.scrub` is complete only once `<dir>` has been renamed to `<dir>.old`.

use std::path::{Path, PathBuf};

/// What a transform sees: the keyspace's name, an entry's key and value. It returns the
/// value to keep (`None`: drop the entry).
pub(crate) type Transform<'a> = dyn FnMut(&str, &[u8], &[u8]) -> Option<Vec<u8>> + 'a;

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    dir.with_file_name(name)
}

/// Finish or undo a swap a crash interrupted. Called before the database at `dir` opens.
pub(crate) fn recover(dir: &Path) -> std::io::Result<()> {
    let scrub = sibling(dir, ".scrub");
    let old = sibling(dir, ".old");
    if !dir.exists() {
        if old.exists() && scrub.exists() {
            // The copy was complete (the old one was moved aside only after it): finish.
            std::fs::rename(&scrub, dir)?;
        } else if old.exists() {
            std::fs::rename(&old, dir)?;
        }
    }
    if dir.exists() {
        for leftover in [scrub, old] {
            if leftover.exists() {
                std::fs::remove_dir_all(leftover)?;
            }
        }
    }
    Ok(())
}

/// Copy the (closed) database at `dir` through `transform` into a new one, and put it in
/// the old one's place. Nobody may have `dir` open.
pub(crate) fn rewrite(dir: &Path, transform: &mut Transform<'_>) -> Result<(), fjall::Error> {
    recover(dir)?;
    let scrub = sibling(dir, ".scrub");
    let old = sibling(dir, ".old");
    {
        let src = super::database(dir).open()?;
        let dst = super::database(&scrub).open()?;
        for name in src.list_keyspace_names() {
            let name: &str = name.as_ref();
            let from = src.keyspace(name, || super::options_of(name))?;
            let to = dst.keyspace(name, || super::options_of(name))?;
            let mut ingest = to.start_ingestion()?;
            for kv in from.iter() {
                let (key, value) = kv.into_inner()?;
                if let Some(v) = transform(name, &key, &value) {
                    ingest.write(key, v)?;
                }
            }
            ingest.finish()?;
        }
        dst.persist(fjall::PersistMode::SyncAll)?;
    }
    std::fs::rename(dir, &old)?;
    std::fs::rename(&scrub, dir)?;
    std::fs::remove_dir_all(&old)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fjall::Database;

    #[test]
    fn a_rewrite_keeps_what_the_transform_keeps_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let db_dir = dir.path().join("fjall");
        {
            let db = Database::builder(&db_dir).open().unwrap();
            let ks = db.keyspace("k", super::super::keyspace_options).unwrap();
            ks.insert("a", "secret-1").unwrap();
            ks.insert("b", "plain").unwrap();
            ks.insert("c", "drop me").unwrap();
            db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        rewrite(&db_dir, &mut |_, k, v| match k {
            b"a" => Some(b"[REDACTED]".to_vec()),
            b"c" => None,
            _ => Some(v.to_vec()),
        })
        .unwrap();
        let db = Database::builder(&db_dir).open().unwrap();
        let ks = db.keyspace("k", super::super::keyspace_options).unwrap();
        assert_eq!(ks.get("a").unwrap().as_deref(), Some(&b"[REDACTED]"[..]));
        assert_eq!(ks.get("b").unwrap().as_deref(), Some(&b"plain"[..]));
        assert_eq!(ks.get("c").unwrap(), None);
        assert!(!sibling(&db_dir, ".old").exists() && !sibling(&db_dir, ".scrub").exists());
    }

    #[test]
    fn an_interrupted_swap_is_finished_or_undone() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("fjall");
        // Crashed between the renames: the copy is complete, finish the swap.
        std::fs::create_dir_all(sibling(&d, ".old")).unwrap();
        std::fs::create_dir_all(sibling(&d, ".scrub")).unwrap();
        std::fs::write(sibling(&d, ".scrub").join("new"), "n").unwrap();
        recover(&d).unwrap();
        assert!(d.join("new").exists());
        assert!(!sibling(&d, ".old").exists());
        // Crashed during the copy: drop the partial copy, keep the original.
        std::fs::create_dir_all(sibling(&d, ".scrub")).unwrap();
        recover(&d).unwrap();
        assert!(d.join("new").exists() && !sibling(&d, ".scrub").exists());
    }
}
