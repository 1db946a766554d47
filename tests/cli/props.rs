//! Property tests on stable, run by `tests/run`: random and mutated real-shaped input never
//! panics a parser or the hook, and never costs a valid line. The seed lines are the fuzz
//! corpus's (`fuzz/seeds`); `fuzz/run` explores the same properties for longer.

use std::path::{Path, PathBuf};

use peat::capture::reader::{LineReader, Parsed, classify_line};
use peat::capture::{FileHints, parse_str};

/// A small deterministic generator (xorshift): every run explores the same cases, and a
/// failure names the case that fails.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seed(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// `line` damaged one way: bits flipped, cut short, spliced with another, NULs, CRs,
/// invalid UTF-8, or fresh random bytes.
fn mutate(rng: &mut Rng, line: &str, other: &str) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    match rng.below(7) {
        0 => {
            for _ in 0..=rng.below(8) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => b.truncate(rng.below(b.len())),
        2 => {
            b.truncate(rng.below(b.len()));
            b.extend_from_slice(other.as_bytes());
        }
        3 => {
            let i = rng.below(b.len());
            b.splice(i..i, std::iter::repeat_n(0u8, 1 + rng.below(64)));
        }
        4 => b.push(b'\r'),
        5 => {
            let i = rng.below(b.len());
            b.insert(i, 0xff);
        }
        _ => b = (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
    }
    b.retain(|c| *c != b'\n');
    b
}

/// The events of a transcript in order, without their seqs (which follow line numbers).
fn events(text: &str) -> Vec<String> {
    let (_, emit) = parse_str(text, &FileHints::default()).expect("a recognised transcript");
    emit.events.values().map(|e| format!("{e:?}")).collect()
}

/// For each format: noise lines (mutations that no longer parse) between the valid lines
/// change nothing the parser emits, and mutated lines never panic it.
#[test]
fn noise_between_valid_lines_never_costs_one_and_never_panics() {
    for name in ["claude.jsonl", "codex.jsonl"] {
        let text = seed(name);
        let lines: Vec<&str> = text.lines().collect();
        let clean = events(&text);
        assert!(!clean.is_empty(), "{name}: the seed emits nothing");
        let mut rng = Rng(0x5eed_0000 + name.len() as u64);
        // Noise actually inserted, so the equality below is not the seed against itself.
        let mut noise = 0;
        for case in 0..300 {
            let mut noisy: Vec<u8> = Vec::new();
            let mut mutated: Vec<u8> = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                let other = lines[rng.below(lines.len())];
                // Keep the first line whole: it is what the format is detected by.
                if i > 0 {
                    let m = mutate(&mut rng, line, other);
                    if matches!(classify_line(&m), Parsed::Bad | Parsed::Blank) {
                        noisy.extend_from_slice(&m);
                        noisy.push(b'\n');
                        noise += 1;
                    }
                    mutated.extend_from_slice(&m);
                    mutated.push(b'\n');
                }
                noisy.extend_from_slice(line.as_bytes());
                noisy.push(b'\n');
            }
            let noisy = String::from_utf8_lossy(&noisy);
            assert_eq!(events(&noisy), clean, "{name} case {case}:\n{noisy}");
            // Only mutations: anything may come out, but nothing may panic.
            let mut head = lines[0].as_bytes().to_vec();
            head.push(b'\n');
            head.extend_from_slice(&mutated);
            let _ = parse_str(&String::from_utf8_lossy(&head), &FileHints::default());
        }
        assert!(
            noise >= 300,
            "{name}: only {noise} noise lines in 300 cases"
        );
    }
}

/// Random bytes read as lines lose none: offsets are contiguous and end at the file's end,
/// and every terminated line is returned byte for byte (less its `\r\n`).
#[test]
fn the_line_reader_accounts_for_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0xb17e5);
    for case in 0..200 {
        let len = rng.below(5000);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(10) {
                0 => b'\n',
                1 => b'\r',
                _ => rng.next() as u8,
            })
            .collect();
        let p: PathBuf = dir.path().join(format!("{case}.jsonl"));
        std::fs::write(&p, &bytes).unwrap();
        let mut r = LineReader::open(&p, 0).unwrap().unwrap();
        let mut at = 0u64;
        while let Some(l) = r.next_line().unwrap() {
            assert_eq!(l.start, at, "case {case}");
            let raw = &bytes[l.start as usize..l.end as usize];
            let mut want = raw.strip_suffix(b"\n").unwrap_or(raw);
            want = want.strip_suffix(b"\r").unwrap_or(want);
            assert_eq!(l.bytes, want, "case {case}");
            assert_eq!(l.terminated, raw.ends_with(b"\n"), "case {case}");
            at = l.end;
        }
        assert_eq!(at, len as u64, "case {case}");
    }
}

/// Any stdin, mutated from real payloads or random, is taken by the hook without a panic.
#[test]
fn any_hook_stdin_is_parsed_without_a_panic() {
    let payloads: Vec<String> = (0..3).map(|i| seed(&format!("hook-{i}.json"))).collect();
    let mut rng = Rng(0x400c);
    for _ in 0..2000 {
        let p = &payloads[rng.below(payloads.len())];
        let other = &payloads[rng.below(payloads.len())];
        let raw = mutate(&mut rng, p, other);
        let input = peat::hook::Input::parse(&raw);
        let _ = peat::hook::plan(&input, None);
    }
}
