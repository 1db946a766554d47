//! One writer at a time: an OS lock on the store directory, waited for with bounded backoff.
//!
//! The lock is taken on the directory itself, not on a file in it: a file can be deleted
//! while held, and the next process would lock a new file of the same name and get in
//! beside the holder. `<store>/lock` says who holds it, so a process that gives up can say
//! what to wait for. The OS releases the lock when its holder exits, however it exits.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Held while the store is open; dropping it releases the lock.
#[derive(Debug)]
pub struct StoreLock {
    /// The holder line's file.
    file: File,
    /// The store directory, whose OS lock this is.
    _dir: File,
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        // Leave no stale holder line behind; the unlock itself happens when the file closes.
        let _ = self.file.set_len(0);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("the ledger at {} is busy: {holder}, still after {}s", path.display(), waited.as_secs())]
    Busy {
        path: PathBuf,
        holder: String,
        waited: Duration,
    },
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Take the lock of the store holding `path` (its `lock` file), waiting up to `wait`. `who` says what this process is doing.
/// `on_wait` is called once if the lock is not free at first.
pub fn acquire(
    path: &Path,
    wait: Duration,
    who: &str,
    on_wait: &mut dyn FnMut(),
) -> Result<StoreLock, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    let dir = File::open(path.parent().unwrap_or(Path::new("."))).map_err(io)?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(10);
    let mut told = false;
    loop {
        match dir.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                let waited = started.elapsed();
                if waited >= wait {
                    return Err(LockError::Busy {
                        path: path.parent().unwrap_or(path).to_path_buf(),
                        holder: holder_of(&mut file),
                        waited,
                    });
                }
                if !told {
                    told = true;
                    on_wait();
                }
                std::thread::sleep(pause.min(wait.saturating_sub(waited)));
                pause = (pause * 2).min(Duration::from_millis(500));
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    let line = format!("pid {} ({who})\n", std::process::id());
    file.set_len(0).map_err(io)?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(line.as_bytes()).map_err(io)?;
    Ok(StoreLock { file, _dir: dir })
}

fn holder_of(file: &mut File) -> String {
    let mut s = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut s);
    match s.lines().next().map(str::trim).filter(|l| !l.is_empty()) {
        Some(line) => format!("held by {line}"),
        None => "held by another peat process".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_times_out_naming_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lock");
        let _held = acquire(&p, Duration::ZERO, "peat import", &mut || {}).unwrap();
        let mut waited = false;
        let err = acquire(&p, Duration::from_millis(50), "peat capture", &mut || {
            waited = true
        })
        .unwrap_err();
        assert!(waited);
        let msg = err.to_string();
        assert!(msg.contains("peat import"), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
    }

    #[test]
    fn deleting_the_lock_file_does_not_let_a_second_writer_in() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lock");
        let _held = acquire(&p, Duration::ZERO, "first", &mut || {}).unwrap();
        std::fs::remove_file(&p).unwrap();
        let second = acquire(&p, Duration::from_millis(50), "second", &mut || {});
        assert!(matches!(second, Err(LockError::Busy { .. })), "{second:?}");
    }

    #[test]
    fn a_released_lock_can_be_taken_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lock");
        drop(acquire(&p, Duration::ZERO, "a", &mut || {}).unwrap());
        assert!(acquire(&p, Duration::ZERO, "b", &mut || {}).is_ok());
    }
}
