//! How fast each parser reads a megabyte of its own format, against the Claude Code parser.
//!
//! ```text
//! cargo run --release --example parse_speed -- [MB]
//! ```
//!
//! Each format's fixture (`tests/fixtures/<agent>/`) is repeated, its opening line once,
//! until the text holds about MB megabytes (default 16), and parsed whole the way a capture
//! parses it (`parse_str`: every line read as JSON, fed to the parser, then flushed), three
//! times; the best time is printed as MB/s and as a ratio to Claude Code's, with how many
//! events a megabyte gives. Nothing is written: the ledger's cost is per event, the same for
//! every format, and is left out; a capture's speed per megabyte also depends on how many
//! events a megabyte holds (the last column). Figures only; nothing here asserts a time.

use std::time::{Duration, Instant};

use peat::capture::{FileHints, parse_str};

const FORMATS: &[(&str, &str, usize)] = &[
    // (name, fixture, opening lines written once)
    (
        "claude",
        include_str!("../tests/fixtures/claude/full-session.jsonl"),
        0,
    ),
    (
        "cursor",
        include_str!("../tests/fixtures/cursor/session.jsonl"),
        0,
    ),
    (
        "copilot",
        include_str!("../tests/fixtures/copilot/events.jsonl"),
        1,
    ),
    ("pi", include_str!("../tests/fixtures/pi/session.jsonl"), 1),
    (
        "droid",
        include_str!("../tests/fixtures/droid/session.jsonl"),
        1,
    ),
    (
        "qwen",
        include_str!("../tests/fixtures/qwen/session.jsonl"),
        0,
    ),
];

fn main() {
    let mb: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 16,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: parse_speed [MB]   (a whole number of megabytes, 16 if none)");
            std::process::exit(2);
        }
    };
    let mut claude_rate = None;
    println!("format    MB     best      MB/s   vs claude   events/MB");
    for (name, fixture, head) in FORMATS {
        let text = grown(fixture, *head, mb << 20);
        let size = text.len() as f64 / f64::from(1 << 20);
        let mut events = 0;
        let best = (0..3)
            .map(|_| {
                let start = Instant::now();
                let (_, out) = parse_str(&text, &FileHints::default()).expect("a known format");
                assert!(!out.events.is_empty(), "{name} parsed to nothing");
                events = out.events.len();
                start.elapsed()
            })
            .min()
            .unwrap_or(Duration::ZERO);
        let rate = size / best.as_secs_f64();
        let base = *claude_rate.get_or_insert(rate);
        println!(
            "{name:<8} {size:>4.1} {:>8.0}ms {rate:>8.1}   {:>6.2}x   {:>9.0}",
            best.as_secs_f64() * 1000.0,
            rate / base,
            events as f64 / size
        );
    }
}

/// `fixture` with its lines after the first `head` repeated until the text holds `bytes`.
fn grown(fixture: &str, head: usize, bytes: usize) -> String {
    let lines: Vec<&str> = fixture.lines().collect();
    let (opening, body) = lines.split_at(head);
    let mut text = String::with_capacity(bytes + fixture.len());
    for line in opening {
        text.push_str(line);
        text.push('\n');
    }
    while text.len() < bytes {
        for line in body {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}
