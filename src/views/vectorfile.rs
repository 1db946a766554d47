//! The vector lane as one file a search maps: what a search scans, instead of reading every
//! vector row of the store per query (at a million events, 320-350 ms of a 390 ms recall).
//!
//! The rows in the store stay the truth. The file is a copy of them, written whole by the
//! embedding pass when it finishes and by a rebuild, and replaced atomically (a temp file
//! renamed over it). Between two writes, every key whose vector row changes is recorded in
//! the changes table ([`super::tables::Table::VectorChanges`]): a search scores the file
//! minus those keys plus their rows as they stand, so a revised text's old vector, still in
//! the file, is never scored.
//!
//! A file is read only if its stamp is the one the rows record: a nonce drawn at each write
//! and kept in the generation beside the rows (with the changes cleared) in one ingestion
//! after the rename, the ledger's identity, the view schema and the model. A file of
//! another store, generation or write, or cut short, is not read: the search reads the
//! rows instead, as it did before this file existed.
//!
//! The layout (little-endian), columns rather than records so that the scan reads one
//! contiguous block of codes: a header ([`MAGIC`], the view schema, the dimension, the
//! count, the keys' length, the nonce, then the identity and the model, each after its
//! length), padded to 4 bytes; then the scales (f32 each), the key ends (u32 each), the
//! codes (`dim` signed bytes each) and the event keys, in key order.

use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::ViewError;
use super::fault::{self, Fault};

const MAGIC: &[u8; 8] = b"PEATVEC1";

/// The bytes of a nonce: one write of the file from another, whatever else they share.
pub(crate) const NONCE: usize = 16;

/// What a file must say of itself to be read: the store's stamp of the lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) schema: u32,
    pub(crate) identity: Vec<u8>,
    pub(crate) model: String,
    pub(crate) nonce: [u8; NONCE],
}

impl Stamp {
    /// A fresh nonce, for a new write.
    pub(crate) fn fresh_nonce() -> Result<[u8; NONCE], ViewError> {
        let mut nonce = [0u8; NONCE];
        getrandom::fill(&mut nonce)
            .map_err(|e| ViewError::Store(format!("no random nonce for the vector file: {e}")))?;
        Ok(nonce)
    }
}

/// Vectors in key order, as one block: `scales` (f32 each), `key_ends` (u32 each, the end
/// of each key in `keys`), `codes` (`dim` signed bytes each) and `keys`. Both the file and
/// rows read from the store give one, so one scan serves both.
#[derive(Clone, Copy, Default)]
pub(crate) struct Block<'a> {
    pub(crate) scales: &'a [u8],
    pub(crate) key_ends: &'a [u8],
    pub(crate) codes: &'a [u8],
    pub(crate) keys: &'a [u8],
    pub(crate) dim: usize,
}

impl<'a> Block<'a> {
    pub(crate) fn len(&self) -> usize {
        self.scales.len() / 4
    }

    fn end(&self, i: usize) -> usize {
        u32::from_le_bytes(self.key_ends[i * 4..i * 4 + 4].try_into().unwrap_or([0; 4])) as usize
    }

    pub(crate) fn key(&self, i: usize) -> &'a [u8] {
        let start = if i == 0 { 0 } else { self.end(i - 1) };
        &self.keys[start..self.end(i)]
    }

    pub(crate) fn scale(&self, i: usize) -> f32 {
        f32::from_le_bytes(self.scales[i * 4..i * 4 + 4].try_into().unwrap_or([0; 4]))
    }

    pub(crate) fn codes(&self, i: usize) -> &'a [u8] {
        &self.codes[i * self.dim..(i + 1) * self.dim]
    }

    /// The row holding `key`, if any (rows are in key order).
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        let at = self.first_at_or_after(key);
        (at < self.len() && self.key(at) == key).then_some(at)
    }

    /// The first row whose key is not below `key`.
    pub(crate) fn first_at_or_after(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Whether the columns agree with the count and the dimension (a block is never read
    /// past its bytes).
    fn whole(&self) -> bool {
        let n = self.len();
        self.scales.len() == n * 4
            && self.key_ends.len() == n * 4
            && self.codes.len() == n * self.dim
            && (0..n).all(|i| {
                let start = if i == 0 { 0 } else { self.end(i - 1) };
                start <= self.end(i) && self.end(i) <= self.keys.len()
            })
            && (n == 0 || self.end(n - 1) == self.keys.len())
    }
}

/// A vector file, mapped read-only.
pub(crate) struct Mapped {
    map: Mmap,
    at: [usize; 4],
    dim: usize,
}

impl Mapped {
    pub(crate) fn block(&self) -> Block<'_> {
        let [scales, ends, codes, keys] = self.at;
        Block {
            scales: &self.map[scales..ends],
            key_ends: &self.map[ends..codes],
            codes: &self.map[codes..keys],
            keys: &self.map[keys..],
            dim: self.dim,
        }
    }
}

/// The file at `path` mapped, if it is there, whole, and stamped `want`; `None` otherwise
/// (the caller reads the rows instead).
pub(crate) fn open(path: &Path, want: &Stamp) -> Option<Mapped> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the file is only ever replaced by a rename, never written in place, so the
    // bytes mapped do not change under the map (a reader keeps the replaced file's inode).
    let map = unsafe { Mmap::map(&file) }.ok()?;
    let (stamp, dim, count, keys_len, body) = header(&map)?;
    if stamp != *want && !fault::active(Fault::VectorFileUnstamped) {
        return None;
    }
    let at = [
        body,
        body + count * 4,
        body + count * 8,
        body + count * 8 + count * dim,
    ];
    if map.len() != at[3].checked_add(keys_len)? {
        return None;
    }
    let mapped = Mapped { map, at, dim };
    mapped.block().whole().then_some(mapped)
}

/// The header's stamp, dimension, count, keys' length and where the columns start.
fn header(b: &[u8]) -> Option<(Stamp, usize, usize, usize, usize)> {
    let mut r = Reader { b, at: 0 };
    if r.take(8)? != MAGIC {
        return None;
    }
    let schema = r.u32()?;
    let dim = r.u32()? as usize;
    let count = usize::try_from(r.u64()?).ok()?;
    let keys_len = usize::try_from(r.u64()?).ok()?;
    let nonce: [u8; NONCE] = r.take(NONCE)?.try_into().ok()?;
    let len = r.u32()? as usize;
    let identity = r.take(len)?.to_vec();
    let len = r.u32()? as usize;
    let model = String::from_utf8(r.take(len)?.to_vec()).ok()?;
    let body = r.at.next_multiple_of(4);
    count.checked_mul(dim.checked_add(8)?)?;
    let stamp = Stamp {
        schema,
        identity,
        model,
        nonce,
    };
    Some((stamp, dim, count, keys_len, body))
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// Write `block` stamped `stamp` to `path`, atomically: a temp file beside it, synced, then
/// renamed over it.
pub(crate) fn write(path: &Path, stamp: &Stamp, block: Block<'_>) -> Result<(), ViewError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ViewError::Io { path, source }
    };
    let mut head = Vec::with_capacity(64 + stamp.identity.len() + stamp.model.len());
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&stamp.schema.to_le_bytes());
    head.extend_from_slice(&(block.dim as u32).to_le_bytes());
    head.extend_from_slice(&(block.len() as u64).to_le_bytes());
    head.extend_from_slice(&(block.keys.len() as u64).to_le_bytes());
    head.extend_from_slice(&stamp.nonce);
    head.extend_from_slice(&(stamp.identity.len() as u32).to_le_bytes());
    head.extend_from_slice(&stamp.identity);
    head.extend_from_slice(&(stamp.model.len() as u32).to_le_bytes());
    head.extend_from_slice(stamp.model.as_bytes());
    head.resize(head.len().next_multiple_of(4), 0);
    let tmp = temp_path(path);
    // A write a crash cut short leaves its temp file: this one replaces it.
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&tmp)(e)),
        _ => {}
    }
    let file = crate::ledger::private::create_file(&tmp).map_err(io(&tmp))?;
    let mut f = std::io::BufWriter::new(file);
    for part in [
        &head[..],
        block.scales,
        block.key_ends,
        block.codes,
        block.keys,
    ] {
        f.write_all(part).map_err(io(&tmp))?;
    }
    let f = f.into_inner().map_err(|e| io(&tmp)(e.into_error()))?;
    f.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// The file of `generation`'s lane in the store at `store`.
pub(crate) fn path(store: &Path, generation: u32) -> PathBuf {
    store.join(format!("vectors.v{generation}"))
}

/// Remove `generation`'s file, and a temp file a write left behind.
pub(crate) fn remove(store: &Path, generation: u32) -> Result<(), ViewError> {
    let file = path(store, generation);
    for p in [temp_path(&file), file] {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(ViewError::Io { path: p, source: e });
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(nonce: u8) -> Stamp {
        Stamp {
            schema: 13,
            identity: b"ledger-a".to_vec(),
            model: "m@1".into(),
            nonce: [nonce; NONCE],
        }
    }

    /// Three vectors of dimension 4 under keys "a", "bb", "c".
    fn columns() -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut scales = Vec::new();
        let mut ends = Vec::new();
        let mut keys = Vec::new();
        for (i, k) in ["a", "bb", "c"].iter().enumerate() {
            scales.extend_from_slice(&(i as f32 + 1.0).to_le_bytes());
            keys.extend_from_slice(k.as_bytes());
            ends.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        }
        let codes: Vec<u8> = (0..12).collect();
        (scales, ends, codes, keys)
    }

    fn written(dir: &Path) -> PathBuf {
        let (scales, key_ends, codes, keys) = columns();
        let block = Block {
            scales: &scales,
            key_ends: &key_ends,
            codes: &codes,
            keys: &keys,
            dim: 4,
        };
        let p = path(dir, 1);
        write(&p, &stamp(7), block).unwrap();
        p
    }

    #[test]
    fn a_written_file_maps_back_to_the_same_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let p = written(dir.path());
        let mapped = open(&p, &stamp(7)).expect("the file it wrote");
        let b = mapped.block();
        assert_eq!(b.len(), 3);
        assert_eq!(b.key(1), b"bb");
        assert_eq!(b.scale(2), 3.0);
        assert_eq!(b.codes(1), &[4, 5, 6, 7]);
        assert_eq!(b.find(b"c"), Some(2));
        assert_eq!(b.find(b"b"), None);
        assert!(!temp_path(&p).exists(), "the temp file was renamed");
    }

    #[test]
    fn a_file_stamped_otherwise_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = written(dir.path());
        assert!(open(&p, &stamp(8)).is_none(), "another write's nonce");
        let foreign = Stamp {
            identity: b"ledger-b".to_vec(),
            ..stamp(7)
        };
        assert!(open(&p, &foreign).is_none(), "another ledger");
        let older = Stamp {
            schema: 12,
            ..stamp(7)
        };
        assert!(open(&p, &older).is_none(), "another view schema");
        let model = Stamp {
            model: "m@2".into(),
            ..stamp(7)
        };
        assert!(open(&p, &model).is_none(), "another model");
    }

    #[test]
    fn a_truncated_or_lengthened_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = written(dir.path());
        let bytes = std::fs::read(&p).unwrap();
        for cut in [0, 7, 40, bytes.len() - 1] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            assert!(open(&p, &stamp(7)).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        std::fs::write(&p, &longer).unwrap();
        assert!(open(&p, &stamp(7)).is_none(), "a byte too many");
        std::fs::write(&p, &bytes).unwrap();
        assert!(open(&p, &stamp(7)).is_some(), "restored whole");
    }

    #[test]
    fn removing_a_generation_removes_its_file_and_leaves_others() {
        let dir = tempfile::tempdir().unwrap();
        let p = written(dir.path());
        std::fs::copy(&p, path(dir.path(), 2)).unwrap();
        remove(dir.path(), 1).unwrap();
        assert!(!p.exists());
        assert!(path(dir.path(), 2).exists());
        remove(dir.path(), 1).unwrap();
    }
}
