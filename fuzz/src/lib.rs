//! The properties the fuzz targets check, shared by them (the stable property tests in
//! `tests/cli/props.rs` check the same ones with a fixed generator).

use peat::capture::reader::{Parsed, classify_line};
use peat::capture::{FileHints, parse_str};

pub const CLAUDE: &str = include_str!("../seeds/claude.jsonl");
pub const CODEX: &str = include_str!("../seeds/codex.jsonl");

fn events(text: &str) -> Option<Vec<String>> {
    let (_, emit) = parse_str(text, &FileHints::default())?;
    Some(emit.events.values().map(|e| format!("{e:?}")).collect())
}

/// `data`'s lines after a seed's first line never panic the parser; those of them that are
/// noise, put between the seed's valid lines, change nothing it emits.
pub fn transcript(seed: &str, data: &[u8]) {
    let lines: Vec<&str> = seed.lines().collect();
    let mut raw = lines[0].as_bytes().to_vec();
    raw.push(b'\n');
    raw.extend_from_slice(data);
    let _ = parse_str(&String::from_utf8_lossy(&raw), &FileHints::default());

    let noise: Vec<&[u8]> = data
        .split(|b| *b == b'\n')
        .filter(|l| matches!(classify_line(l), Parsed::Bad | Parsed::Blank))
        .collect();
    let mut noisy = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 && !noise.is_empty() {
            noisy.extend_from_slice(noise[i % noise.len()]);
            noisy.push(b'\n');
        }
        noisy.extend_from_slice(line.as_bytes());
        noisy.push(b'\n');
    }
    assert_eq!(
        events(&String::from_utf8_lossy(&noisy)),
        events(seed),
        "noise cost a valid line"
    );
}

/// Any stdin is taken by the hook without a panic.
pub fn hook_stdin(data: &[u8]) {
    let input = peat::cli::hook::Input::parse(data);
    let _ = peat::cli::hook::plan(&input, None);
}
