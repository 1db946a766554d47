//! The store's redaction key: 32 random bytes, hex, in `redact.key` (mode 0600).
//!
//! It keys the HMAC behind each marker's `hash8`, so a marker says "the same secret as
//! that one" inside one store and nothing to anyone without the key.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::RedactError;

pub(crate) const KEY_FILE: &str = "redact.key";

/// The key of the store at `store`, if it has one.
pub(crate) fn load(store: &Path) -> Result<Option<Vec<u8>>, RedactError> {
    let path = store.join(KEY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(s) => parse(&path, &s).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(RedactError::Io {
            what: "read the redaction key",
            path,
            source: e,
        }),
    }
}

/// A random key for one process (a check where no store exists).
pub(crate) fn throwaway() -> Result<Vec<u8>, RedactError> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| RedactError::Io {
        what: "draw a random key for",
        path: PathBuf::from("a check"),
        source: std::io::Error::other(e),
    })?;
    Ok(key.to_vec())
}

/// The key of the store at `store`, created (with the store directory) on first use.
pub(crate) fn load_or_create(store: &Path) -> Result<Vec<u8>, RedactError> {
    if let Some(key) = load(store)? {
        return Ok(key);
    }
    let path = store.join(KEY_FILE);
    let io = |what, source| RedactError::Io {
        what,
        path: path.clone(),
        source,
    };
    crate::ledger::private::create_dir(store).map_err(|e| io("create the store", e))?;
    let key = throwaway()?;
    match crate::ledger::private::create_file(&path) {
        Ok(mut f) => {
            f.write_all(hex::encode(&key).as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(|e| io("write the redaction key", e))?;
            Ok(key)
        }
        // Another process made it first (outside the lock: `peat redact --check`): use its.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let s = std::fs::read_to_string(&path).map_err(|e| io("read the redaction key", e))?;
            parse(&path, &s)
        }
        Err(e) => Err(io("create the redaction key", e)),
    }
}

fn parse(path: &Path, s: &str) -> Result<Vec<u8>, RedactError> {
    let mut key = [0u8; 32];
    hex::decode_to_slice(s.trim(), &mut key)
        .map_err(|_| RedactError::BadKey(PathBuf::from(path)))?;
    Ok(key.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_key_is_created_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("db");
        let a = load_or_create(&store).unwrap();
        let b = load_or_create(&store).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 32);
        let mode = std::fs::metadata(store.join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let other = load_or_create(&dir.path().join("other")).unwrap();
        assert_ne!(a, other, "each store draws its own key");
    }

    #[test]
    fn a_damaged_key_is_an_error_not_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), "nope").unwrap();
        assert!(matches!(
            load_or_create(dir.path()),
            Err(RedactError::BadKey(_))
        ));
    }
}
