//! A private store: directories 0700, files 0600, from the start.
//!
//! While a [`Ledger`](super::Ledger) is open the process umask is 077, so everything the
//! store's libraries create (fjall tables and journals, tantivy segments, the lock, the
//! key) is private without each of them being told. A store made by an older peat, with
//! wider permissions, is tightened once when it is opened.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

/// Create `dir` and its missing parents, private.
pub(crate) fn create_dir(dir: &Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    b.mode(0o700);
    b.create(dir)
}

/// Create `path`, private; fails if it exists.
pub(crate) fn create_file(path: &Path) -> io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    o.mode(0o600);
    o.open(path)
}

/// While any of these lives, files and directories the process creates are private (umask
/// 077). The umask is the process's, and ledgers overlap (a reader's beside a writer's,
/// a test's beside another's): the first guard saves it and the last one puts it back, so
/// no guard restores it from under another.
#[derive(Debug)]
pub(crate) struct PrivateUmask(());

/// How many [`PrivateUmask`] guards live, and the umask the first one replaced.
static HELD: Mutex<(usize, u32)> = Mutex::new((0, 0));

fn held() -> MutexGuard<'static, (usize, u32)> {
    // The count is a plain number: a panic elsewhere while it was locked left it whole.
    HELD.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Files and directories created from now on are private, until the guard (and every
/// other) is dropped.
pub(crate) fn private_umask() -> PrivateUmask {
    let mut h = held();
    if h.0 == 0 {
        h.1 = set_umask(0o077);
    }
    h.0 += 1;
    PrivateUmask(())
}

impl Drop for PrivateUmask {
    fn drop(&mut self) {
        let mut h = held();
        h.0 -= 1;
        if h.0 == 0 {
            set_umask(h.1);
        }
    }
}

/// Set the process umask to `mask`, returning the one it replaces.
fn set_umask(mask: u32) -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: umask only swaps the process's file-creation mask; it cannot fail.
        (unsafe { libc::umask(mask as libc::mode_t) }) as u32
    }
    #[cfg(not(unix))]
    {
        let _ = mask;
        0
    }
}

/// If the store directory is open to others, make everything under it private. Returns
/// how many entries were tightened (0: it was private already).
pub(crate) fn tighten(store: &Path) -> io::Result<usize> {
    #[cfg(unix)]
    {
        let mode = std::fs::metadata(store)?.permissions().mode();
        if mode & 0o077 == 0 {
            return Ok(0);
        }
        tighten_tree(store)
    }
    #[cfg(not(unix))]
    {
        let _ = store;
        Ok(0)
    }
}

#[cfg(unix)]
fn tighten_tree(store: &Path) -> io::Result<usize> {
    let mut n = 0;
    // Links are left as they are: what they point at is not the store's to change.
    for entry in walkdir::WalkDir::new(store).follow_root_links(false) {
        let entry = entry?;
        if entry.path_is_symlink() {
            continue;
        }
        let meta = entry.metadata()?;
        let mode = meta.permissions().mode();
        let want = if meta.is_dir() { 0o700 } else { 0o600 };
        if mode & 0o077 != 0 {
            std::fs::set_permissions(
                entry.path(),
                std::fs::Permissions::from_mode(mode & 0o700 | want),
            )?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_world_readable_store_is_tightened_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("db");
        std::fs::create_dir_all(store.join("fjall")).unwrap();
        std::fs::write(store.join("fjall/journal"), b"x").unwrap();
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(store.join("fjall"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(
            store.join("fjall/journal"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        assert_eq!(tighten(&store).unwrap(), 3);
        assert_eq!(mode(&store), 0o700);
        assert_eq!(mode(&store.join("fjall")), 0o700);
        assert_eq!(mode(&store.join("fjall/journal")), 0o600);
        assert_eq!(tighten(&store).unwrap(), 0);
    }

    /// How many guards live and the umask now, read together.
    fn snapshot() -> (usize, u32) {
        let h = held();
        let mask = set_umask(0o077);
        set_umask(mask);
        (h.0, mask)
    }

    #[test]
    fn overlapping_guards_keep_the_store_private_until_the_last_one_goes() {
        let (n, outside) = snapshot();
        let first = private_umask();
        let second = private_umask();
        drop(first);
        assert_eq!(
            snapshot().1,
            0o077,
            "the second guard still needs it private"
        );
        drop(second);
        let (now, mask) = snapshot();
        // Other tests of this process may hold guards of their own meanwhile.
        if n == 0 && now == 0 {
            assert_eq!(mask, outside, "the last guard puts the umask back");
        }
    }
}
