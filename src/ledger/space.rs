//! Which disk a store is on and how much room it has, to say so when a write fails.

use std::path::{Path, PathBuf};

/// A write that failed for lack of space, with what to tell the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shortage {
    /// The mount point of the store's file system, when it can be found.
    pub(crate) mount: Option<PathBuf>,
    /// Bytes free for this user on that file system.
    pub(crate) free: u64,
    /// Bytes the failed write needed, about (what it carried, plus room for the flush).
    pub(crate) needed: u64,
}

/// Room kept free beyond what a write carries: fjall writes a table per flush and a new
/// journal on rotation, so a write that only just fits still fails.
pub(crate) const SLACK: u64 = 4 << 20;

/// The bytes left on the disk holding `store` when they are fewer than [`SLACK`]: too few
/// for any write to the store to go through, so a failure there is the disk's, not damage.
pub(crate) fn short_of_room(store: &Path) -> Option<u64> {
    free_bytes(store).filter(|&f| f < SLACK)
}

/// Whether `err` (a write that carried `carried` bytes to the store at `store`) failed for
/// lack of space. fjall reports `ENOSPC` directly on the failing write, but later calls
/// only say `Poisoned`: then the disk itself is asked.
pub(crate) fn shortage(store: &Path, err: &fjall::Error, carried: u64) -> Option<Shortage> {
    let needed = carried.saturating_mul(2).saturating_add(SLACK);
    let free = free_bytes(store);
    let says_full = match err {
        fjall::Error::Io(io) | fjall::Error::Storage(fjall::LsmError::Io(io)) => is_full(io),
        fjall::Error::Poisoned => free.is_some_and(|f| f < needed),
        _ => false,
    };
    says_full.then(|| Shortage {
        mount: mount_of(store),
        free: free.unwrap_or(0),
        needed,
    })
}

/// `ENOSPC` or `EDQUOT`.
pub(crate) fn is_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// Bytes available to this user on the file system holding `path` (or its nearest
/// existing ancestor).
pub(crate) fn free_bytes(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    fs4::available_space(existing).ok()
}

/// The mount point of the file system holding `path`: the longest mount point in
/// `/proc/self/mountinfo` that is a prefix of its canonical form.
pub(crate) fn mount_of(path: &Path) -> Option<PathBuf> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let real = std::fs::canonicalize(existing).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape_mount)
        .filter(|m| real.starts_with(m))
        .max_by_key(|m| m.as_os_str().len())
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape_mount(field: &str) -> PathBuf {
    let mut out = Vec::with_capacity(field.len());
    let b = field.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && let Some(oct) = field.get(i + 1..i + 4)
            && let Ok(v) = u8::from_str_radix(oct, 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// `3.2 MB`, `512 KB`, `17 B`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_mount_of_last_resort() {
        let m = mount_of(Path::new("/definitely/not/here")).unwrap();
        assert_eq!(m, Path::new("/"));
    }

    #[test]
    fn escaped_mount_points_are_read_back() {
        assert_eq!(
            unescape_mount("/mnt/my\\040disk"),
            Path::new("/mnt/my disk")
        );
    }

    #[test]
    fn sizes_read_like_df() {
        assert_eq!(human(17), "17 B");
        assert_eq!(human(3 << 20), "3.0 MB");
        assert_eq!(human(1536), "1.5 KB");
    }
}
