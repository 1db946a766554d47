//! Raw lines from a transcript, one at a time, from a byte offset.
//!
//! Lines can be tens of MB (a Read result, a base64 image): each is read whole, but only one
//! is held at a time. A line past [`MAX_LINE`] is skipped without being held: in a plain
//! file, a line that grows past [`PROBE_AT`] is measured ahead on a second handle before
//! more of it is buffered; in a `.zst` (which cannot be read ahead) at most [`MAX_LINE`]
//! is held before the rest is skipped. A last line with no newline may still be being
//! written: the caller decides what to do with it.
//!
//! Only regular files are read ([`regular_file`]): a FIFO or a device never ends.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Longer lines are skipped (and counted), never held in memory.
pub(crate) const MAX_LINE: usize = 256 << 20;

/// A line longer than this in a plain file is measured before more of it is held.
pub(crate) const PROBE_AT: usize = 4 << 20;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// One raw line.
#[derive(Debug)]
pub struct Line {
    /// Byte offset of the line's first byte (in the decompressed stream for `.zst`).
    pub start: u64,
    /// Byte offset just past the line's newline (or its last byte, if unterminated).
    pub end: u64,
    /// The line without its `\n` (and `\r`). Empty when `too_long`.
    pub bytes: Vec<u8>,
    /// The line ended in `\n`. An unterminated last line may be incomplete.
    pub terminated: bool,
    /// The line was longer than [`MAX_LINE`] and was skipped unread.
    pub too_long: bool,
}

/// What `path` is, when it is not a regular file (following symlinks): `None` for a
/// regular file. A FIFO, a socket or a device would block or never end.
pub(crate) fn not_regular(path: &Path) -> io::Result<Option<&'static str>> {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::metadata(path)?.file_type();
    Ok(if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    })
}

/// `Ok` for a regular file; an `InvalidInput` error naming what it is otherwise.
pub(crate) fn regular_file(path: &Path) -> io::Result<()> {
    match not_regular(path)? {
        None => Ok(()),
        Some(kind) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file"),
        )),
    }
}

/// Reads lines from a plain or zstd-compressed transcript.
pub struct LineReader {
    inner: Box<dyn BufRead>,
    offset: u64,
    /// A second handle on a plain file, to measure an overlong line without holding it.
    probe: Option<File>,
    /// [`MAX_LINE`] and [`PROBE_AT`], smaller in tests.
    max_line: usize,
    probe_at: usize,
    /// Whether the file is zstd-compressed (offsets are then in the decompressed stream).
    #[cfg(test)]
    compressed: bool,
}

impl LineReader {
    /// Open `path` and position at byte `offset` (of the decompressed stream for `.zst`).
    /// Returns `Ok(None)` if the stream is shorter than `offset` (the file was replaced).
    pub fn open(path: &Path, offset: u64) -> io::Result<Option<LineReader>> {
        // Checked before opening: opening a FIFO for reading blocks until a writer comes.
        regular_file(path)?;
        let mut file = File::open(path)?;
        let mut magic = [0u8; 4];
        let n = read_up_to(&mut file, &mut magic)?;
        let compressed = n == 4 && magic == ZSTD_MAGIC;
        let file = File::open(path)?;
        let probe = if compressed {
            None
        } else {
            Some(File::open(path)?)
        };
        let mut inner: Box<dyn BufRead> = if compressed {
            Box::new(BufReader::with_capacity(
                1 << 16,
                zstd::stream::read::Decoder::new(file)?,
            ))
        } else {
            let mut file = file;
            if offset > 0 {
                let len = file.metadata()?.len();
                if len < offset {
                    return Ok(None);
                }
                io::Seek::seek(&mut file, io::SeekFrom::Start(offset))?;
            }
            Box::new(BufReader::with_capacity(1 << 16, file))
        };
        if compressed && offset > 0 {
            let skipped = io::copy(&mut (&mut inner).take(offset), &mut io::sink())?;
            if skipped < offset {
                return Ok(None);
            }
        }
        Ok(Some(LineReader {
            inner,
            offset,
            probe,
            max_line: MAX_LINE,
            probe_at: PROBE_AT,
            #[cfg(test)]
            compressed,
        }))
    }

    /// The next raw line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        let start = self.offset;
        let mut bytes = Vec::new();
        let mut too_long = false;
        let mut terminated = false;
        loop {
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let (chunk, found) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if !too_long {
                let held = bytes.len() + chunk;
                let crossing = held > self.probe_at && bytes.len() <= self.probe_at;
                if held > self.max_line
                    || (crossing && overlong(self.probe.as_mut(), start, self.max_line)?)
                {
                    too_long = true;
                    bytes = Vec::new();
                } else {
                    bytes.extend_from_slice(&buf[..chunk]);
                }
            }
            self.inner.consume(chunk);
            self.offset += chunk as u64;
            if found {
                terminated = true;
                break;
            }
        }
        if self.offset == start {
            return Ok(None);
        }
        if terminated && !too_long {
            bytes.pop();
        }
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        Ok(Some(Line {
            start,
            end: self.offset,
            bytes,
            terminated,
            too_long,
        }))
    }
}

/// Whether the plain-file line starting at `start` runs past `max_line`, measured on the
/// probe handle with a fixed buffer. Always `false` without a probe (a `.zst`).
fn overlong(probe: Option<&mut File>, start: u64, max_line: usize) -> io::Result<bool> {
    let Some(probe) = probe else {
        return Ok(false);
    };
    io::Seek::seek(probe, io::SeekFrom::Start(start))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0usize;
    loop {
        let n = probe.read(&mut buf)?;
        if n == 0 {
            return Ok(len > max_line);
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            return Ok(len + i + 1 > max_line);
        }
        len += n;
        if len > max_line {
            return Ok(true);
        }
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// What a raw line holds.
#[derive(Debug)]
pub enum Parsed {
    /// Nothing but whitespace: not counted as bad.
    Blank,
    Json(serde_json::Value),
    /// Not JSON (garbage, a truncated record, a non-object).
    Bad,
}

/// Parse one raw line leniently: invalid UTF-8 is replaced, NUL runs and a trailing `\r`
/// are dropped, and of two records spliced with `}{` the last whole one is kept.
pub fn classify_line(raw: &[u8]) -> Parsed {
    // Valid UTF-8 is the rule; the lossy copy is only for the lines that are not.
    let text = match std::str::from_utf8(raw) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(raw),
    };
    let text = text.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    if text.is_empty() {
        return Parsed::Blank;
    }
    if let Some(v @ serde_json::Value::Object(_)) = super::bignum::parse(text) {
        return Parsed::Json(v);
    }
    // Unsynchronized writers splice records: `{"a":…tru}{"b":…}`. Keep the last whole one.
    let mut from = 0;
    while let Some(i) = text[from..].find("}{") {
        let at = from + i + 1;
        if let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(&text[at..]) {
            return Parsed::Json(v);
        }
        from = at;
    }
    Parsed::Bad
}

/// The JSON object on a raw line, if it holds one.
pub(crate) fn parse_line(raw: &[u8]) -> Option<serde_json::Value> {
    match classify_line(raw) {
        Parsed::Json(v) => Some(v),
        Parsed::Blank | Parsed::Bad => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(bytes: &[u8], offset: u64) -> Vec<Line> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, bytes).unwrap();
        let mut r = LineReader::open(&p, offset).unwrap().unwrap();
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    #[test]
    fn an_unterminated_last_line_is_flagged() {
        let ls = lines_of(b"{\"a\":1}\n{\"b\":", 0);
        assert_eq!(ls.len(), 2);
        assert!(ls[0].terminated);
        assert_eq!(ls[0].bytes, b"{\"a\":1}");
        assert!(!ls[1].terminated);
        assert_eq!(ls[1].start, 8);
    }

    #[test]
    fn reading_resumes_at_an_offset() {
        let ls = lines_of(b"{\"a\":1}\r\n{\"b\":2}\n", 9);
        assert_eq!(ls.len(), 1);
        assert_eq!(ls[0].bytes, b"{\"b\":2}");
        let first = lines_of(b"{\"a\":1}\r\n", 0);
        assert_eq!(first[0].bytes, b"{\"a\":1}");
    }

    #[test]
    fn zstd_transcripts_read_like_plain_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl.zst");
        let mut enc =
            zstd::stream::write::Encoder::new(std::fs::File::create(&p).unwrap(), 3).unwrap();
        enc.write_all(b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        enc.finish().unwrap();
        let mut r = LineReader::open(&p, 8).unwrap().unwrap();
        assert!(r.compressed);
        let l = r.next_line().unwrap().unwrap();
        assert_eq!(l.bytes, b"{\"b\":2}");
        assert!(LineReader::open(&p, 1000).unwrap().is_none());
    }

    /// Reads every line of `bytes` with a 100 KB cap, probing past 10 KB; returns the lines
    /// and the most bytes any line held while being read.
    fn capped_lines(path: &Path) -> Vec<Line> {
        let mut r = LineReader::open(path, 0).unwrap().unwrap();
        r.max_line = 100_000;
        r.probe_at = 10_000;
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    #[test]
    fn an_overlong_line_is_skipped_and_the_next_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut bytes = b"{\"a\":1}\n{\"big\":\"".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 150_000));
        bytes.extend_from_slice(b"\"}\n");
        let fits = format!("{{\"mid\":\"{}\"}}\n", "y".repeat(50_000));
        bytes.extend_from_slice(fits.as_bytes());
        bytes.extend_from_slice(b"{\"b\":2}\n");
        std::fs::write(&p, &bytes).unwrap();
        let ls = capped_lines(&p);
        assert_eq!(ls.len(), 4);
        assert!(ls[1].too_long && ls[1].bytes.is_empty());
        assert_eq!(ls[1].end, ls[2].start);
        assert!(
            !ls[2].too_long,
            "a line under the cap past the probe is kept"
        );
        assert_eq!(ls[2].bytes.len(), fits.len() - 1);
        assert_eq!(ls[3].bytes, b"{\"b\":2}");
        assert_eq!(ls[3].end, bytes.len() as u64);
    }

    #[test]
    fn an_overlong_unterminated_tail_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut bytes = b"{\"a\":1}\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 120_000));
        std::fs::write(&p, &bytes).unwrap();
        let ls = capped_lines(&p);
        assert!(ls[1].too_long && !ls[1].terminated);
    }

    #[test]
    fn fifos_and_devices_are_refused_before_they_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opening a FIFO with no writer would block this test forever.
        for (p, kind) in [
            (fifo.as_path(), "FIFO"),
            (Path::new("/dev/zero"), "character device"),
            (dir.path(), "directory"),
        ] {
            let err = LineReader::open(p, 0).err().expect("refused");
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert!(err.to_string().contains(kind), "{err}");
        }
    }

    #[test]
    fn bad_lines_are_classified_not_fatal() {
        assert!(matches!(classify_line(b""), Parsed::Blank));
        assert!(matches!(classify_line(b"   "), Parsed::Blank));
        assert!(matches!(classify_line(b"not json"), Parsed::Bad));
        assert!(matches!(classify_line(b"[1,2]"), Parsed::Bad));
        assert!(matches!(classify_line(b"{\"a\":tr"), Parsed::Bad));
        assert!(matches!(classify_line(b"\0\0\0{\"a\":1}"), Parsed::Json(_)));
        assert!(matches!(
            classify_line(&[0xff, 0xfe, b'{', b'}']),
            Parsed::Bad
        ));
        assert!(matches!(
            classify_line(b"{\"t\":\"\xff\"}"),
            Parsed::Json(_)
        ));
        match classify_line(b"{\"a\":\"cut mid}{\"b\":2}") {
            Parsed::Json(v) => assert_eq!(v["b"], 2),
            other => panic!("{other:?}"),
        }
    }
}
