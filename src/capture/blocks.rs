//! SEARCH/REPLACE edit blocks, the edit format Cline's `replace_in_file` and Aider's
//! `diff` edit format share: a head line (`------- SEARCH`, or the older `<<<<<<< SEARCH`),
//! the text to find, a divider (`=======`), the text to put in its place, and an end line
//! (`+++++++ REPLACE`, or `>>>>>>> REPLACE`). Aider names the file on a line just before
//! each block (before its opening fence, or on the fence itself); Cline's blocks are a
//! tool's argument and its call names the file.
//!
//! Follows Cline 3.89 (`src/core/assistant-message/diff.ts`: three or more marker
//! characters, an optional `>` after the word) and Aider 0.86 (`aider/coders/
//! editblock_coder.py`: `find_original_update_blocks` and `find_filename`, where a second
//! divider also ends a block).

use std::ops::Range;

use crate::vocab::change::Replacement;

/// One block: the file named before it (Aider's, if any) and what it replaces.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) file: Option<String>,
    pub(crate) edit: Replacement,
    /// The bytes of the text the block takes up: from the line naming its file (or its
    /// opening fence) to its end line and the fence closing it.
    pub(crate) span: Range<usize>,
}

/// Every whole block in `text`, in order. A block's file is the one named before it, or
/// the previous block's; a block without its divider or end line is not yet whole and is
/// left out.
pub(crate) fn edit_blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Where each line starts, and the text's end after the last.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(lines.iter().scan(0, |at, l| {
            *at += l.len();
            Some(*at)
        }))
        .collect();
    let mut blocks = Vec::new();
    let mut file: Option<String> = None;
    let mut i = 0;
    // Where the previous block ended: a file is named after it, never before.
    let mut after = 0;
    while i < lines.len() {
        if !is_head(lines[i]) {
            i += 1;
            continue;
        }
        let before = i.saturating_sub(3).max(after);
        let mut first = i;
        if let Some((at, named)) = file_before(&lines[before..i]) {
            file = Some(named);
            first = before + at;
        } else if i > before && lines[i - 1].trim_start().starts_with("```") {
            first = i - 1;
        }
        let mut old = String::new();
        let mut j = i + 1;
        while j < lines.len() && !is_divider(lines[j]) {
            old.push_str(lines[j]);
            j += 1;
        }
        let mut new = String::new();
        let mut k = j + 1;
        while k < lines.len() && !is_end(lines[k]) && !is_divider(lines[k]) {
            new.push_str(lines[k]);
            k += 1;
        }
        if k >= lines.len() {
            break;
        }
        let mut last = k;
        if lines.get(k + 1).is_some_and(|l| l.trim() == "```") {
            last = k + 1;
        }
        blocks.push(Block {
            file: file.clone(),
            edit: Replacement {
                old,
                new,
                replace_all: false,
            },
            span: starts[first]..starts[last + 1],
        });
        i = k + 1;
        // The fence closing the block is its own: never the next one's opening.
        after = last + 1;
    }
    blocks
}

/// `text` without `blocks` (found in it by [`edit_blocks`]): what was said around the
/// edits, which the edits themselves record.
pub(crate) fn prose(text: &str, blocks: &[Block]) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut at = 0;
    for block in blocks {
        kept.push_str(&text[at..block.span.start]);
        at = block.span.end;
    }
    kept.push_str(&text[at..]);
    kept
}

/// A run of at least three of `marker`, then ` WORD`, an optional `>`, nothing else.
fn marked(line: &str, markers: &[char], word: &str) -> bool {
    let line = line.trim();
    let rest = line.trim_start_matches(markers);
    line.len() - rest.len() >= 3
        && rest
            .strip_prefix(' ')
            .and_then(|r| r.strip_prefix(word))
            .is_some_and(|r| r.is_empty() || r == ">")
}

fn is_head(line: &str) -> bool {
    marked(line, &['-'], "SEARCH") || marked(line, &['<'], "SEARCH")
}

fn is_end(line: &str) -> bool {
    marked(line, &['+'], "REPLACE") || marked(line, &['>'], "REPLACE")
}

fn is_divider(line: &str) -> bool {
    let line = line.trim();
    line.len() >= 3 && line.chars().all(|c| c == '=')
}

/// The file Aider names before a block, and the index in `before` of the line naming it:
/// the nearest line of `before` that is not a bare fence (a fence with a path after it
/// names one), looking no further than that line.
fn file_before(before: &[&str]) -> Option<(usize, String)> {
    for (at, line) in before.iter().enumerate().rev() {
        let line = line.trim();
        if let Some(after) = line.strip_prefix("```") {
            if after.contains('.') || after.contains('/') {
                return Some((at, after.to_string()));
            }
            continue;
        }
        let name = line
            .trim_end_matches(':')
            .trim_start_matches('#')
            .trim()
            .trim_matches('`')
            .trim_matches('*');
        return (!name.is_empty() && name != "...").then(|| (at, name.to_string()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Replacement {
        Replacement {
            old: old.into(),
            new: new.into(),
            replace_all: false,
        }
    }

    #[test]
    fn clines_blocks_in_both_spellings_are_read_in_order() {
        let diff = "------- SEARCH\nfn a() {}\n=======\nfn a() { 1 }\n+++++++ REPLACE\n\
                    <<<<<<< SEARCH\nfn b() {}\n=======\n>>>>>>> REPLACE\n";
        let got = edit_blocks(diff);
        assert_eq!(
            got,
            vec![
                Block {
                    file: None,
                    edit: edit("fn a() {}\n", "fn a() { 1 }\n"),
                    span: 0..62,
                },
                Block {
                    file: None,
                    edit: edit("fn b() {}\n", ""),
                    span: 62..diff.len(),
                },
            ]
        );
    }

    #[test]
    fn aiders_blocks_take_the_file_named_before_their_fence_or_on_it() {
        let reply = "Here it is.\n\nsrc/a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\
                     \n```src/b.py\n<<<<<<< SEARCH\n=======\ny = 3\n>>>>>>> REPLACE\n```\n\
                     ```python\n<<<<<<< SEARCH\nx = 2\n=======\nx = 4\n>>>>>>> REPLACE\n```\n";
        let blocks = edit_blocks(reply);
        let files: Vec<Option<&str>> = blocks.iter().map(|b| b.file.as_deref()).collect();
        // The third block names no file: it is the previous block's.
        assert_eq!(
            files,
            [Some("src/a.py"), Some("src/b.py"), Some("src/b.py")]
        );
        // Each block takes its file's line, its fences and all between.
        assert_eq!(prose(reply, &blocks), "Here it is.\n\n\n");
        // A block right after another's closing fence, with none of its own, does not take
        // that fence again.
        let adjacent = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\
                        <<<<<<< SEARCH\ny\n=======\nz\n>>>>>>> REPLACE\nok\n";
        let blocks = edit_blocks(adjacent);
        assert_eq!(blocks.len(), 2);
        assert!(blocks[0].span.end <= blocks[1].span.start);
        assert_eq!(prose(adjacent, &blocks), "ok\n");
    }

    #[test]
    fn a_block_not_yet_whole_or_a_look_alike_is_no_block() {
        assert!(edit_blocks("<<<<<<< SEARCH\nx\n=======\ny\n").is_empty());
        assert!(edit_blocks("<< SEARCH\nx\n==\ny\n>> REPLACE\n").is_empty());
        assert!(edit_blocks("------- SEARCH please\nx\n=======\ny\n+++++++ REPLACE\n").is_empty());
    }
}
