//! Raw lines from a transcript, one at a time, from a byte offset.
//!
//! Lines can be tens of MB (a Read result, a base64 image): each is read whole, but only one
//! is held at a time. A line past [`MAX_LINE`] is skipped without being held. A last line
//! with no newline may still be being written: the caller decides what to do with it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Longer lines are skipped (and counted), never held in memory.
pub const MAX_LINE: usize = 256 << 20;

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

/// Reads lines from a plain or zstd-compressed transcript.
pub struct LineReader {
    inner: Box<dyn BufRead>,
    offset: u64,
    /// Whether the file is zstd-compressed (offsets are then in the decompressed stream).
    pub compressed: bool,
}

impl LineReader {
    /// Open `path` and position at byte `offset` (of the decompressed stream for `.zst`).
    /// Returns `Ok(None)` if the stream is shorter than `offset` (the file was replaced).
    pub fn open(path: &Path, offset: u64) -> io::Result<Option<LineReader>> {
        let mut file = File::open(path)?;
        let mut magic = [0u8; 4];
        let n = read_up_to(&mut file, &mut magic)?;
        let compressed = n == 4 && magic == ZSTD_MAGIC;
        let file = File::open(path)?;
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
                if bytes.len() + chunk > MAX_LINE {
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
    match serde_json::from_str(text) {
        Ok(v @ serde_json::Value::Object(_)) => return Parsed::Json(v),
        Err(e) if super::bignum::out_of_range(&e) => {
            if let Some(v @ serde_json::Value::Object(_)) =
                super::bignum::parse_keeping_text(text, &e)
            {
                return Parsed::Json(v);
            }
        }
        _ => {}
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
pub fn parse_line(raw: &[u8]) -> Option<serde_json::Value> {
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
