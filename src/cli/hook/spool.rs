//! The spool beside the ledger (`<store>/spool`): closing messages not yet recorded, and
//! which transcripts already have a capture waiting for the lock.
//!
//! A Stop hook's closing message exists nowhere else (the transcript may not hold it yet),
//! so it is written here before any capture waits for the lock, and removed only once a
//! capture has recorded it: a capture that gives up leaves it for the next one. And since a
//! capture reads its transcript to the end once it has the lock, one waiting capture per
//! transcript is enough: later hooks leave their message here and start no other.

use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::ledger::private;

/// A waiting capture older than this is presumed gone (it waits 120 s by default).
const WAITING_AT_MOST: Duration = Duration::from_secs(15 * 60);

/// A closing message waiting to be recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Spooled {
    pub(crate) transcript: PathBuf,
    pub(crate) final_msg: String,
}

fn dir(store: &Path) -> PathBuf {
    store.join("spool")
}

/// A transcript's path as the spool records it: canonical where it can be resolved.
pub(crate) fn canonical(transcript: &Path) -> PathBuf {
    fs::canonicalize(transcript).unwrap_or_else(|_| transcript.to_path_buf())
}

/// The spool's name for a transcript: a hash of its canonical path.
fn key(transcript: &Path) -> String {
    key_of(&canonical(transcript))
}

/// The spool's name for a path already made [`canonical`] (as a [`Spooled`] holds it).
fn key_of(canonical: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(canonical.to_string_lossy().as_bytes());
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}

/// Keep `final_msg` for `transcript` until a capture records it (replacing an older one:
/// the latest Stop's message is the closing one).
pub(crate) fn put(store: &Path, transcript: &Path, final_msg: &str) -> io::Result<()> {
    let dir = dir(store);
    private::create_dir(&dir)?;
    let entry = Spooled {
        transcript: canonical(transcript),
        final_msg: final_msg.to_string(),
    };
    let name = key_of(&entry.transcript);
    let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
    // A leftover of this pid's namesake that died mid-write: create_file makes only new files.
    let _ = fs::remove_file(&tmp);
    let mut f = private::create_file(&tmp)?;
    io::Write::write_all(&mut f, &serde_json::to_vec(&entry).unwrap_or_default())?;
    drop(f);
    fs::rename(&tmp, dir.join(format!("{name}.final")))
}

/// Every closing message waiting to be recorded.
pub(crate) fn pending(store: &Path) -> Vec<Spooled> {
    let Ok(entries) = fs::read_dir(dir(store)) else {
        return Vec::new();
    };
    let mut out: Vec<Spooled> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".final"))
        .filter_map(|e| serde_json::from_slice(&fs::read(e.path()).ok()?).ok())
        .collect();
    out.sort_by(|a, b| a.transcript.cmp(&b.transcript));
    out
}

/// `entry` was recorded: remove it, unless a newer message replaced it meanwhile.
pub(crate) fn done(store: &Path, entry: &Spooled) {
    // Named as `put` named it, even if the path resolves differently since.
    let path = dir(store).join(format!("{}.final", key_of(&entry.transcript)));
    let current: Option<Spooled> = fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if current.as_ref() == Some(entry) {
        let _ = fs::remove_file(path);
    }
}

fn waiting_path(store: &Path, transcript: &Path) -> PathBuf {
    dir(store).join(format!("{}.waiting", key(transcript)))
}

/// Claim the one waiting capture of `transcript`: `Ok(true)` when this caller should start
/// it (then [`waiter`] names its pid), `Ok(false)` when one is already waiting.
pub(crate) fn claim(store: &Path, transcript: &Path) -> io::Result<bool> {
    private::create_dir(&dir(store))?;
    let path = waiting_path(store, transcript);
    for _ in 0..2 {
        match private::create_file(&path) {
            Ok(_) => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if still_waiting(&path) {
                    return Ok(false);
                }
                // Its capture was killed, or finished without clearing it.
                let _ = fs::remove_file(&path);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// The capture started for a claim runs as `pid`. If it already took the lock and
/// released the claim, the claim is not made again.
pub(crate) fn waiter(store: &Path, transcript: &Path, pid: u32) {
    let claim = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(waiting_path(store, transcript));
    if let Ok(mut f) = claim {
        let _ = io::Write::write_all(&mut f, pid.to_string().as_bytes());
    }
}

/// The capture of `transcript` has the lock (or gave up): it no longer waits.
pub(crate) fn release(store: &Path, transcript: &Path) {
    let path = waiting_path(store, transcript);
    let mine = fs::read_to_string(&path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .is_none_or(|pid| pid == std::process::id());
    if mine {
        let _ = fs::remove_file(path);
    }
}

/// A claim is live while its process runs and it is not older than any capture waits.
fn still_waiting(path: &Path) -> bool {
    let young = fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < WAITING_AT_MOST);
    let pid = fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    // A claim without a pid yet is a hook about to spawn: live while young.
    young && pid.is_none_or(|p| Path::new(&format!("/proc/{p}")).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_message_replaces_and_survives_the_older_ones_completion() {
        let store = tempfile::tempdir().unwrap();
        let t = store.path().join("t.jsonl");
        fs::write(&t, "").unwrap();
        put(store.path(), &t, "first").unwrap();
        let first = pending(store.path()).remove(0);
        put(store.path(), &t, "second").unwrap();
        done(store.path(), &first);
        let left = pending(store.path());
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].final_msg, "second");
        done(store.path(), &left[0]);
        assert!(pending(store.path()).is_empty());
    }

    #[test]
    fn one_capture_waits_per_transcript_until_released_or_gone() {
        let store = tempfile::tempdir().unwrap();
        let t = store.path().join("t.jsonl");
        fs::write(&t, "").unwrap();
        assert!(claim(store.path(), &t).unwrap());
        waiter(store.path(), &t, std::process::id());
        assert!(
            !claim(store.path(), &t).unwrap(),
            "a second capture would wait too"
        );
        release(store.path(), &t);
        assert!(claim(store.path(), &t).unwrap());
        // A pid that is not running: its claim is stale.
        waiter(store.path(), &t, u32::MAX - 1);
        assert!(claim(store.path(), &t).unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn the_spool_is_private_like_the_rest_of_the_store() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        // The first Stop hook may come before any ledger: it makes the store itself.
        let store = dir.path().join("store");
        let t = dir.path().join("t.jsonl");
        fs::write(&t, "").unwrap();
        put(&store, &t, "the closing message").unwrap();
        assert!(claim(&store, &t).unwrap());
        assert_eq!(mode(&store), 0o700);
        assert_eq!(mode(&store.join("spool")), 0o700);
        let files: Vec<PathBuf> = fs::read_dir(store.join("spool"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 2, "{files:?}");
        for f in files {
            assert_eq!(mode(&f), 0o600, "{}", f.display());
        }
    }
}
