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

use crate::vocab::change::Replacement;

/// One block: the file named before it (Aider's, if any) and what it replaces.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) file: Option<String>,
    pub(crate) edit: Replacement,
}

/// Every whole block in `text`, in order. A block's file is the one named before it, or
/// the previous block's; a block without its divider or end line is not yet whole and is
/// left out.
pub(crate) fn edit_blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
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
        if let Some(named) = file_before(&lines[i.saturating_sub(3).max(after)..i]) {
            file = Some(named);
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
        blocks.push(Block {
            file: file.clone(),
            edit: Replacement {
                old,
                new,
                replace_all: false,
            },
        });
        i = k + 1;
        after = i;
    }
    blocks
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

/// The file Aider names before a block: the nearest line of `before` that is not a bare
/// fence (a fence with a path after it names one), looking no further than that line.
fn file_before(before: &[&str]) -> Option<String> {
    for line in before.iter().rev() {
        let line = line.trim();
        if let Some(after) = line.strip_prefix("```") {
            if after.contains('.') || after.contains('/') {
                return Some(after.to_string());
            }
            continue;
        }
        let name = line
            .trim_end_matches(':')
            .trim_start_matches('#')
            .trim()
            .trim_matches('`')
            .trim_matches('*');
        return (!name.is_empty() && name != "...").then(|| name.to_string());
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
                    edit: edit("fn a() {}\n", "fn a() { 1 }\n")
                },
                Block {
                    file: None,
                    edit: edit("fn b() {}\n", "")
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
    }

    #[test]
    fn a_block_not_yet_whole_or_a_look_alike_is_no_block() {
        assert!(edit_blocks("<<<<<<< SEARCH\nx\n=======\ny\n").is_empty());
        assert!(edit_blocks("<< SEARCH\nx\n==\ny\n>> REPLACE\n").is_empty());
        assert!(edit_blocks("------- SEARCH please\nx\n=======\ny\n+++++++ REPLACE\n").is_empty());
    }
}
