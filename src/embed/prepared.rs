//! The prepared model: the pinned model as ONNX Runtime optimises it, saved once so a
//! one-shot search does not optimise it again.
//!
//! Optimising the pinned int8 model folds its weight dequantisation into ~90 MB of float
//! constants, which is most of what creating a session costs. The prepared copy keeps the
//! folded graph in `model.onnx` and the weights in `weights.bin` beside it, which ONNX
//! Runtime memory-maps instead of copying; loaded with optimisation off and without
//! prepacking, a session is ready in about a tenth of the time (measurements in
//! [`super::onnx`]).
//!
//! It is derived, not pinned: built locally by the verified runtime from the verified model,
//! keyed by both (so another model or runtime never reuses it), and recorded in the same
//! `verified.json` stamps. A prepared copy that no longer matches its stamp is rebuilt; it is
//! never trusted.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::artifacts::{Lookup, Resolved, Stamps, sha256_bytes, sha256_file};
use super::lock::{ModelsLock, Role};

/// Bump when the way the copy is produced changes.
const FORMAT: &str = "prepared-v1";
pub(crate) const MODEL_FILE: &str = "model.onnx";
pub(crate) const WEIGHTS_FILE: &str = "weights.bin";

/// What a one-shot load can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// A prepared copy whose files match their stamps.
    Ready(PathBuf),
    /// None yet: build one into this directory (a temporary one, committed afterwards).
    Buildable(Build),
    /// Nowhere to keep one (no data directory): load the pinned model as it is.
    Unavailable,
}

/// Where a new prepared copy is written, and where it goes when it is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Build {
    pub(crate) tmp: PathBuf,
    pub(crate) dir: PathBuf,
}

/// Identify the copy by the exact model and runtime that produce and read it.
fn key(lock: &ModelsLock, lookup: &Lookup, resolved: &Resolved) -> String {
    let model = lock
        .artifact(Role::Model, &lookup.platform)
        .map_or("unpinned", |a| a.sha256.as_str())
        .to_string();
    let runtime = match lock.artifact(Role::Runtime, &lookup.platform) {
        Some(a) => a.sha256.clone(),
        // An unpinned runtime is identified by where it is and its size and time.
        None => {
            let meta = fs::metadata(&resolved.runtime.path).ok();
            format!(
                "{}|{:?}|{:?}",
                resolved.runtime.path.display(),
                meta.as_ref().map(fs::Metadata::len),
                meta.and_then(|m| m.modified().ok())
            )
        }
    };
    sha256_bytes(format!("{FORMAT}|{model}|{runtime}").as_bytes())[..16].to_string()
}

/// Find a usable prepared copy, or say where to build one.
pub(crate) fn locate(lock: &ModelsLock, lookup: &Lookup, resolved: &Resolved) -> Prepared {
    let (Some(base), Some(stamp_path)) = (lookup.install_dir(lock), lookup.stamp_path(lock)) else {
        return Prepared::Unavailable;
    };
    let dir = base.join("prepared").join(key(lock, lookup, resolved));
    let stamps = Stamps::load(&stamp_path);
    let vouched = [MODEL_FILE, WEIGHTS_FILE].iter().all(|f| {
        let p = dir.join(f);
        fs::metadata(&p).is_ok_and(|m| stamps.vouches_recorded(&p, &m))
    });
    if vouched {
        return Prepared::Ready(dir.join(MODEL_FILE));
    }
    // Unique per process and per build within it (tests load in parallel).
    static BUILDS: AtomicUsize = AtomicUsize::new(0);
    let n = BUILDS.fetch_add(1, Ordering::Relaxed);
    Prepared::Buildable(Build {
        tmp: base
            .join("prepared")
            .join(format!(".tmp-{}-{n}", std::process::id())),
        dir,
    })
}

/// Make room for a build: an empty temporary directory.
pub(crate) fn begin(build: &Build) -> std::io::Result<()> {
    let _ = fs::remove_dir_all(&build.tmp);
    fs::create_dir_all(&build.tmp)
}

/// Move a finished build into place and stamp it. Any failure leaves no half copy behind
/// (the next load simply builds again).
pub(crate) fn commit(
    lock: &ModelsLock,
    lookup: &Lookup,
    build: &Build,
) -> std::io::Result<PathBuf> {
    let result = commit_inner(lock, lookup, build);
    let _ = fs::remove_dir_all(&build.tmp);
    result
}

fn commit_inner(lock: &ModelsLock, lookup: &Lookup, build: &Build) -> std::io::Result<PathBuf> {
    for f in [MODEL_FILE, WEIGHTS_FILE] {
        if !build.tmp.join(f).is_file() {
            return Err(std::io::Error::other(format!("{f} was not written")));
        }
    }
    // A stale copy (its stamp no longer vouches for it) is replaced; a process still reading
    // it keeps its open files.
    if build.dir.exists() {
        fs::remove_dir_all(&build.dir)?;
    }
    fs::rename(&build.tmp, &build.dir)?;
    let Some(stamp_path) = lookup.stamp_path(lock) else {
        return Err(std::io::Error::other("no data directory"));
    };
    let mut stamps = Stamps::load(&stamp_path);
    for f in [MODEL_FILE, WEIGHTS_FILE] {
        let p = build.dir.join(f);
        let sha = sha256_file(&p)?;
        stamps.record(&p, &fs::metadata(&p)?, &sha);
    }
    stamps.save(&stamp_path)?;
    Ok(build.dir.join(MODEL_FILE))
}

/// Give up on a build (its session failed): remove what it wrote.
pub(crate) fn abandon(build: &Build) {
    let _ = fs::remove_dir_all(&build.tmp);
}

/// Remove a prepared copy that failed to load (it is rebuilt next time).
pub(crate) fn discard(model: &Path) {
    if let Some(dir) = model.parent() {
        let _ = fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::artifacts::{Located, Origin};

    fn resolved(dir: &Path) -> Resolved {
        let l = |role, name: &str| Located {
            role,
            path: dir.join(name),
            origin: Origin::DataDir,
        };
        Resolved {
            model: l(Role::Model, "model.onnx"),
            tokenizer: l(Role::Tokenizer, "tokenizer.json"),
            runtime: l(Role::Runtime, "libonnxruntime.so"),
        }
    }

    #[test]
    fn a_build_is_used_only_once_committed_and_stamped() {
        let tmp = tempfile::tempdir().unwrap();
        let lock = crate::embed::pinned().unwrap();
        let lookup = Lookup::from_vars(
            |k| (k == "PEAT_DATA_DIR").then(|| tmp.path().as_os_str().to_owned()),
            None,
            None,
        );
        let r = resolved(tmp.path());
        let Prepared::Buildable(build) = locate(lock, &lookup, &r) else {
            panic!("expected a build")
        };
        begin(&build).unwrap();
        fs::write(build.tmp.join(MODEL_FILE), b"graph").unwrap();
        // Half a build is never committed.
        assert!(commit(lock, &lookup, &build).is_err());
        assert!(!build.tmp.exists() && !build.dir.exists());

        begin(&build).unwrap();
        fs::write(build.tmp.join(MODEL_FILE), b"graph").unwrap();
        fs::write(build.tmp.join(WEIGHTS_FILE), b"weights").unwrap();
        let model = commit(lock, &lookup, &build).unwrap();
        assert_eq!(locate(lock, &lookup, &r), Prepared::Ready(model.clone()));

        // Tampering with the weights makes it a build again, never a trusted copy.
        crate::embed::artifacts::tests::tamper(&build.dir.join(WEIGHTS_FILE), b"weightz");
        assert!(matches!(locate(lock, &lookup, &r), Prepared::Buildable(_)));
    }

    #[test]
    fn without_a_data_directory_there_is_no_prepared_copy() {
        let lock = crate::embed::pinned().unwrap();
        let lookup = Lookup::from_vars(|_| None, None, None);
        assert_eq!(
            locate(lock, &lookup, &resolved(Path::new("/x"))),
            Prepared::Unavailable
        );
    }
}
