//! One writer at a time: an OS lock on the store directory, waited for with bounded backoff.
//!
//! The lock is taken on the directory itself, not on a file in it: a file can be deleted
//! while held, and the next process would lock a new file of the same name and get in
//! beside the holder. `<store>/lock` says who holds it, so a process that gives up can say
//! what to wait for. The OS releases the lock when its holder exits, however it exits.
//!
//! Readers do not take it while a writer holds it: they read the views as they stand. The
//! views have a lock of their own ([`ViewsLock`], `<store>/views.lock`), held by whoever has
//! the views database open: writers only while they write the views, readers while they
//! read. fjall itself admits one process per database, so this lock only makes the order
//! explicit: a writer folding a long catch-up pauses between chunks when a reader asks
//! (`<store>/views.wanted`), so a reader waits at most one chunk, never a whole capture.
//! The order is always the store lock, then the views lock: a reader holding the views
//! never waits for the store lock, so the two can never wait on each other.

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
        // Leave no stale holder line behind; the unlock itself happens when `_dir` closes,
        // after this (fields drop after `drop`), so no new holder's line is ever erased.
        let _ = self.file.set_len(0);
    }
}

/// Which of a store's two locks a process waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// The store's own lock: the ledger, held by its one writer.
    Ledger,
    /// The views lock, held by whoever has the views database open.
    Views,
}

impl Held {
    /// What is busy, as the error names it.
    fn busy(self) -> &'static str {
        match self {
            Held::Ledger => "the ledger at",
            Held::Views => "the views of the store at",
        }
    }

    fn is(self) -> &'static str {
        match self {
            Held::Ledger => "is",
            Held::Views => "are",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{} {} {} busy: {holder}, still after {}s", held.busy(), path.display(), held.is(), waited.as_secs())]
    Busy {
        held: Held,
        /// The store directory.
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

/// Take the lock of the store holding `path` (its `lock` file), waiting up to `wait`. `who`
/// says what this process is doing.
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
    let mut file = holder_file(path).map_err(io)?;
    let dir = File::open(path.parent().unwrap_or(Path::new("."))).map_err(io)?;
    let mut pause = Duration::from_millis(10);
    let mut told = false;
    let taken = retry(&dir, wait, |left| {
        if !told {
            told = true;
            on_wait();
        }
        let sleep = pause.min(left);
        // At most a tenth of a second late: a read waiting out a writer answers soon
        // after it ends (with 500 ms, one waited half a second past a capture).
        pause = (pause * 2).min(Duration::from_millis(100));
        sleep
    })
    .map_err(io)?;
    if let Err(waited) = taken {
        return Err(LockError::Busy {
            held: Held::Ledger,
            path: path.parent().unwrap_or(path).to_path_buf(),
            holder: holder_of(&mut file),
            waited,
        });
    }
    // The holder line only names this process to a waiter: on a full disk it cannot be
    // written, and the lock (the flock, taken above) holds all the same, so a read still
    // answers and a writer fails on the write itself, saying the disk is full.
    let _ = write_holder(&mut file, who);
    Ok(StoreLock { file, _dir: dir })
}

/// The views lock: held by whoever has the views database open; dropping it releases it.
#[derive(Debug)]
pub struct ViewsLock {
    file: File,
    store: PathBuf,
}

/// The file a process waiting for the views lock creates, asking its holder to pause.
const WANTED: &str = "views.wanted";

/// How often a waiter for the views lock tries again: the holder lets a reader in within a
/// few changes (well under a millisecond; see `PAUSE_CHECK` in the views), so polling must be
/// quick for the read to keep its usual time (flock queues nobody; a try is two syscalls).
const VIEWS_POLL: Duration = Duration::from_micros(500);

impl ViewsLock {
    /// Take the views lock of the store at `store`, waiting up to `wait`. While waiting, ask
    /// the holder to pause (see [`ViewsLock::wanted`]).
    pub fn acquire(store: &Path, wait: Duration, who: &str) -> Result<ViewsLock, LockError> {
        ViewsLock::take(store, wait, who, true)
    }

    /// Whether another process waits for this lock.
    pub(crate) fn wanted(&self) -> bool {
        self.store.join(WANTED).exists()
    }

    /// Let the process that asked for the lock have it, then take it back, waiting up to
    /// `wait`. The holder must have closed the views. Re-locking at once would win the
    /// race every time (flock is not fair): the waiter is given a moment to take it first.
    pub(crate) fn pause(self, wait: Duration, who: &str) -> Result<ViewsLock, LockError> {
        let store = self.store.clone();
        drop(self);
        let started = Instant::now();
        // The waiter removes the request once it holds the lock.
        while store.join(WANTED).exists() && started.elapsed() < Duration::from_millis(200) {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Not asking: a writer resuming waits for the reader it let in.
        let lock = ViewsLock::take(&store, wait, who, false)?;
        // Still asked, yet nobody came: a waiter that was killed. Anyone really waiting
        // asks again within a poll.
        let _ = std::fs::remove_file(store.join(WANTED));
        Ok(lock)
    }

    /// Take the lock, waiting up to `wait`; with `ask`, asking its holder to pause.
    fn take(store: &Path, wait: Duration, who: &str, ask: bool) -> Result<ViewsLock, LockError> {
        let path = store.join("views.lock");
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = holder_file(&path).map_err(io)?;
        let mut asked = false;
        let taken = retry(&file, wait, |left| {
            // Asked again on every try: the holder clears the request once served.
            if ask && (!asked || !store.join(WANTED).exists()) {
                asked = true;
                let _ = File::create(store.join(WANTED));
            }
            VIEWS_POLL.min(left)
        })
        .map_err(io)?;
        if let Err(waited) = taken {
            return Err(LockError::Busy {
                held: Held::Views,
                path: store.to_path_buf(),
                holder: holder_of(&mut file),
                waited,
            });
        }
        if asked {
            let _ = std::fs::remove_file(store.join(WANTED));
        }
        // Best effort: the line only tells a waiter what it waits for.
        let _ = write_holder(&mut file, who);
        Ok(ViewsLock {
            file,
            store: store.to_path_buf(),
        })
    }
}

/// Try to lock `file` until it is locked (`Ok(Ok(()))`) or `wait` runs out (`Ok(Err(how
/// long was waited))`). After each busy try, `busy` hears how long is left and says how
/// long to sleep before the next.
fn retry(
    file: &File,
    wait: Duration,
    mut busy: impl FnMut(Duration) -> Duration,
) -> std::io::Result<Result<(), Duration>> {
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Ok(())),
            Err(TryLockError::WouldBlock) => {
                let waited = started.elapsed();
                if waited >= wait {
                    return Ok(Err(waited));
                }
                std::thread::sleep(busy(wait - waited));
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

impl Drop for ViewsLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// The file that holds a lock's holder line, created if missing.
fn holder_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Say in `file` that this process holds the lock, doing `who`.
fn write_holder(file: &mut File, who: &str) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(format!("pid {} ({who})\n", std::process::id()).as_bytes())
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
    fn a_views_lock_waiter_asks_and_the_holders_pause_lets_it_in_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().to_path_buf();
        let held = ViewsLock::acquire(&store, Duration::ZERO, "writer").unwrap();
        assert!(!held.wanted());
        let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (o, s) = (order.clone(), store.clone());
        let reader = std::thread::spawn(move || {
            let got = ViewsLock::acquire(&s, Duration::from_secs(10), "reader").unwrap();
            o.lock().unwrap().push("reader");
            std::thread::sleep(Duration::from_millis(50));
            drop(got);
        });
        let started = Instant::now();
        while !held.wanted() {
            assert!(started.elapsed() < Duration::from_secs(10), "never asked");
            std::thread::sleep(Duration::from_millis(1));
        }
        let again = held.pause(Duration::from_secs(10), "writer").unwrap();
        order.lock().unwrap().push("writer");
        reader.join().unwrap();
        assert_eq!(*order.lock().unwrap(), ["reader", "writer"]);
        assert!(!again.wanted());
    }

    #[test]
    fn a_request_left_by_a_killed_waiter_is_cleared_by_the_next_pause() {
        let dir = tempfile::tempdir().unwrap();
        let held = ViewsLock::acquire(dir.path(), Duration::ZERO, "writer").unwrap();
        File::create(dir.path().join(WANTED)).unwrap();
        assert!(held.wanted());
        let again = held.pause(Duration::from_secs(1), "writer").unwrap();
        assert!(!again.wanted());
    }

    #[test]
    fn a_busy_views_lock_times_out_naming_its_holder_without_asking_when_not_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let _held = ViewsLock::acquire(dir.path(), Duration::ZERO, "writing the views").unwrap();
        let err = ViewsLock::acquire(dir.path(), Duration::ZERO, "reader").unwrap_err();
        assert!(err.to_string().contains("writing the views"), "{err}");
        let said = format!(
            "the views of the store at {} are busy",
            dir.path().display()
        );
        assert!(err.to_string().starts_with(&said), "{err}");
        assert!(!dir.path().join(WANTED).exists());
    }

    #[test]
    fn a_released_lock_can_be_taken_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lock");
        drop(acquire(&p, Duration::ZERO, "a", &mut || {}).unwrap());
        assert!(acquire(&p, Duration::ZERO, "b", &mut || {}).is_ok());
    }
}
