//! Property tests on stable, run by `tests/run`: random and mutated real-shaped input never
//! panics a parser or the hook, and never costs a valid line. The seed lines are the fuzz
//! corpus's (`fuzz/seeds`) and the other formats' fixtures; `fuzz/run` explores the same
//! properties for longer, over the corpus.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};

use peat::capture::reader::{LineReader, Parsed, classify_line};
use peat::capture::{FileHints, parse_str};
use peat::vocab::event::Event;

/// A seed by its path below the repository: the fuzz corpus's, and the fixtures of the
/// formats the corpus does not hold yet.
fn seed(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(name)).unwrap()
}

/// One way to damage a line.
#[derive(Clone, Debug)]
enum Damage {
    /// Bits flipped: (where, which bit).
    Flip(Vec<(Index, u8)>),
    /// Cut short.
    Cut(Index),
    /// Cut short and spliced with another line.
    Splice(Index),
    /// A run of NULs put in.
    Nuls(Index, usize),
    /// A trailing CR.
    Cr,
    /// A byte that is never UTF-8 put in.
    Invalid(Index),
    /// Replaced by fresh random bytes.
    Random(Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        vec((any::<Index>(), 0..8u8), 1..=9).prop_map(Damage::Flip),
        any::<Index>().prop_map(Damage::Cut),
        any::<Index>().prop_map(Damage::Splice),
        (any::<Index>(), 1..=64usize).prop_map(|(at, n)| Damage::Nuls(at, n)),
        Just(Damage::Cr),
        any::<Index>().prop_map(Damage::Invalid),
        vec(any::<u8>(), 0..200).prop_map(Damage::Random),
    ]
}

/// A position in a line of `len` bytes (0 in an empty one).
fn at(i: &Index, len: usize) -> usize {
    if len == 0 { 0 } else { i.index(len) }
}

/// `line` damaged by `d` (spliced with `other`), as one line: no newline left in it.
fn mutate(d: &Damage, line: &str, other: &str) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    match d {
        Damage::Flip(flips) => {
            for (i, bit) in flips {
                if !b.is_empty() {
                    let i = at(i, b.len());
                    b[i] ^= 1 << bit;
                }
            }
        }
        Damage::Cut(i) => b.truncate(at(i, b.len())),
        Damage::Splice(i) => {
            b.truncate(at(i, b.len()));
            b.extend_from_slice(other.as_bytes());
        }
        Damage::Nuls(i, n) => {
            let i = at(i, b.len());
            b.splice(i..i, std::iter::repeat_n(0u8, *n));
        }
        Damage::Cr => b.push(b'\r'),
        Damage::Invalid(i) => b.insert(at(i, b.len()), 0xff),
        Damage::Random(bytes) => b = bytes.clone(),
    }
    b.retain(|c| *c != b'\n');
    b
}

/// The events of a transcript in order, without their seqs (which follow line numbers): a
/// tool's output names its call by its place in the list.
fn events(text: &str) -> Vec<String> {
    let (_, emit) = parse_str(text, &FileHints::default()).expect("a recognised transcript");
    let seqs: Vec<_> = emit.events.keys().collect();
    emit.events
        .values()
        .map(|(ts, e)| match e {
            Event::ToolOutput { call, .. } => {
                let at = seqs.iter().position(|s| *s == call);
                format!("({ts}, output of event #{at:?}: {e:?})")
                    .replace(&format!("call: {call:?}"), "call: _")
            }
            e => format!("{:?}", (ts, e)),
        })
        .collect()
}

/// For each format: noise lines (mutations that no longer parse) between the valid lines
/// change nothing the parser emits, and mutated lines never panic it.
#[test]
fn noise_between_valid_lines_never_costs_one_and_never_panics() {
    for name in [
        "fuzz/seeds/claude.jsonl",
        "fuzz/seeds/codex.jsonl",
        "tests/fixtures/cursor/session.jsonl",
        "tests/fixtures/copilot/events.jsonl",
        "tests/fixtures/pi/session.jsonl",
        "tests/fixtures/qwen/session.jsonl",
        "tests/fixtures/droid/session.jsonl",
    ] {
        let text = seed(name);
        let lines: Vec<&str> = text.lines().collect();
        let clean = events(&text);
        assert!(!clean.is_empty(), "{name}: the seed emits nothing");
        // Noise actually inserted, so the equality below is not the seed against itself.
        let noise = Cell::new(0);
        // Each line but the first (what the format is detected by) damaged, spliced with
        // the other line named.
        let damages = vec((damage(), any::<Index>()), lines.len() - 1);
        let mut runner = TestRunner::new(Config::with_cases(300));
        let outcome = runner.run(&damages, |damages| {
            let mut noisy: Vec<u8> = Vec::new();
            let mut mutated: Vec<u8> = Vec::new();
            noisy.extend_from_slice(lines[0].as_bytes());
            noisy.push(b'\n');
            for (line, (d, other)) in lines[1..].iter().zip(&damages) {
                let m = mutate(d, line, lines[other.index(lines.len())]);
                if matches!(classify_line(&m), Parsed::Bad | Parsed::Blank) {
                    noisy.extend_from_slice(&m);
                    noisy.push(b'\n');
                    noise.set(noise.get() + 1);
                }
                mutated.extend_from_slice(&m);
                mutated.push(b'\n');
                noisy.extend_from_slice(line.as_bytes());
                noisy.push(b'\n');
            }
            let noisy = String::from_utf8_lossy(&noisy);
            prop_assert_eq!(events(&noisy), clean.clone(), "{}:\n{}", name, noisy);
            // Only mutations: anything may come out, but nothing may panic.
            let mut head = lines[0].as_bytes().to_vec();
            head.push(b'\n');
            head.extend_from_slice(&mutated);
            let _ = parse_str(&String::from_utf8_lossy(&head), &FileHints::default());
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{name}: {e}");
        }
        assert!(
            noise.get() >= 300,
            "{name}: only {} noise lines in 300 cases",
            noise.get()
        );
    }
}

/// Bytes with many line ends among them (one in five is a `\n` or a `\r`).
fn file_bytes() -> impl Strategy<Value = Vec<u8>> {
    // One vector of bytes, remapped, rather than a union drawn per byte: as fast as the
    // hand-rolled generator this replaced.
    vec(any::<u8>(), 0..5000).prop_map(|bytes| {
        bytes
            .into_iter()
            .map(|b| match b % 10 {
                0 => b'\n',
                1 => b'\r',
                _ => b,
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(Config::with_cases(200))]

    /// Random bytes read as lines lose none: offsets are contiguous and end at the file's
    /// end, and every terminated line is returned byte for byte (less its `\r\n`).
    #[test]
    fn the_line_reader_accounts_for_every_byte(bytes in file_bytes()) {
        let dir = tempfile::tempdir().unwrap();
        let p: PathBuf = dir.path().join("t.jsonl");
        std::fs::write(&p, &bytes).unwrap();
        let mut r = LineReader::open(&p, 0).unwrap().unwrap();
        let mut at = 0u64;
        while let Some(l) = r.next_line().unwrap() {
            prop_assert_eq!(l.start, at);
            let raw = &bytes[l.start as usize..l.end as usize];
            let mut want = raw.strip_suffix(b"\n").unwrap_or(raw);
            want = want.strip_suffix(b"\r").unwrap_or(want);
            prop_assert_eq!(&l.bytes[..], want);
            prop_assert_eq!(l.terminated, raw.ends_with(b"\n"));
            at = l.end;
        }
        prop_assert_eq!(at, bytes.len() as u64);
    }
}

proptest! {
    #![proptest_config(Config::with_cases(2000))]

    /// Any stdin, mutated from real payloads or random, is taken by the hook without a
    /// panic.
    #[test]
    fn any_hook_stdin_is_parsed_without_a_panic(
        which in 0..3usize,
        other in 0..3usize,
        d in damage(),
    ) {
        let payload = |i: usize| seed(&format!("fuzz/seeds/hook-{i}.json"));
        let raw = mutate(&d, &payload(which), &payload(other));
        let input = peat::cli::hook::Input::parse(&raw);
        let _ = peat::cli::hook::plan(&input, None);
    }
}
