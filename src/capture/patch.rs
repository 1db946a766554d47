//! apply_patch text: Codex's own patch format (formats.md §3.9), parsed leniently.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        then "+" lines
//! *** Delete File: path
//! *** Update File: path     then optional "*** Move to: path", then "@@" hunks
//! *** End Patch
//! ```
//!
//! The parser never fails: whitespace-padded markers, a missing `*** End Patch`, a missing
//! trailing newline, bare or headed `@@`, a first hunk without `@@` and `*** End of File` are
//! all accepted, and lines it cannot place are skipped.

use super::absolute;
use crate::vocab::change::{Change, Hunk};
use crate::vocab::event::TouchOp;

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatchOp {
    /// `*** Add File:`: the whole new content.
    Add { path: String, content: String },
    /// `*** Delete File:`.
    Delete { path: String },
    /// `*** Update File:`, optionally moved, with its hunks.
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

impl PatchOp {
    #[cfg(test)]
    /// The path the operation names (the source path of a move).
    pub(crate) fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. } | PatchOp::Delete { path } | PatchOp::Update { path, .. } => {
                path
            }
        }
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF_MARKER: &str = "*** End of File";

/// The op being built while lines are read.
enum Open {
    None,
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
        /// Blank lines seen inside the current hunk: context lines if another hunk line
        /// follows, trailing noise otherwise.
        blanks: usize,
    },
}

impl Open {
    fn finish(self, ops: &mut Vec<PatchOp>) {
        match self {
            Open::None => {}
            Open::Add { path, lines } => {
                let content = if lines.is_empty() {
                    String::new()
                } else {
                    let mut c = lines.join("\n");
                    c.push('\n');
                    c
                };
                ops.push(PatchOp::Add { path, content });
            }
            Open::Delete { path } => ops.push(PatchOp::Delete { path }),
            Open::Update {
                path,
                move_to,
                hunks,
                ..
            } => ops.push(PatchOp::Update {
                path,
                move_to,
                hunks: hunks.into_iter().filter(|h| !h.lines.is_empty()).collect(),
            }),
        }
    }
}

/// The text after a file marker, trimmed; `None` when the line is not that marker.
fn marker_arg<'a>(trimmed: &'a str, marker: &str) -> Option<&'a str> {
    trimmed.strip_prefix(marker).map(str::trim)
}

/// The operations of an apply_patch text. Text before `*** Begin Patch` is skipped (when the
/// marker is present); parsing stops at `*** End Patch` or the end of the text.
pub(crate) fn parse_patch(text: &str) -> Vec<PatchOp> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == BEGIN)
        .map_or(0, |i| i + 1);
    let mut ops = Vec::new();
    let mut open = Open::None;
    for line in &lines[start..] {
        let trimmed = line.trim();
        if trimmed == END {
            break;
        }
        let new_op = if let Some(p) = marker_arg(trimmed, ADD) {
            Some(Open::Add {
                path: p.to_string(),
                lines: Vec::new(),
            })
        } else if let Some(p) = marker_arg(trimmed, DELETE) {
            Some(Open::Delete {
                path: p.to_string(),
            })
        } else {
            marker_arg(trimmed, UPDATE).map(|p| Open::Update {
                path: p.to_string(),
                move_to: None,
                hunks: Vec::new(),
                blanks: 0,
            })
        };
        if let Some(op) = new_op {
            std::mem::replace(&mut open, op).finish(&mut ops);
            continue;
        }
        match &mut open {
            Open::None | Open::Delete { .. } => {}
            Open::Add { lines, .. } => {
                if let Some(l) = line.strip_prefix('+') {
                    lines.push(l.to_string());
                }
            }
            Open::Update {
                move_to,
                hunks,
                blanks,
                ..
            } => {
                if let Some(p) = marker_arg(trimmed, MOVE) {
                    if !p.is_empty() {
                        *move_to = Some(p.to_string());
                    }
                } else if trimmed == EOF_MARKER {
                    if let Some(h) = hunks.last_mut() {
                        h.end_of_file = true;
                    }
                    *blanks = 0;
                } else if let Some(rest) = line.trim_end().strip_prefix("@@") {
                    let header = rest.trim();
                    hunks.push(Hunk {
                        header: (!header.is_empty()).then(|| header.to_string()),
                        lines: Vec::new(),
                        end_of_file: false,
                    });
                    *blanks = 0;
                } else if line.is_empty() {
                    if !hunks.is_empty() {
                        *blanks += 1;
                    }
                } else if line.starts_with([' ', '-', '+']) {
                    // A first hunk may come without its `@@`.
                    if hunks.is_empty() || hunks.last().is_some_and(|h| h.end_of_file) {
                        hunks.push(Hunk {
                            header: None,
                            lines: Vec::new(),
                            end_of_file: false,
                        });
                    }
                    if let Some(h) = hunks.last_mut() {
                        // Blank lines inside a hunk are empty context lines.
                        for _ in 0..std::mem::take(blanks) {
                            h.lines.push(" ".to_string());
                        }
                        h.lines.push(line.to_string());
                    }
                }
            }
        }
    }
    open.finish(&mut ops);
    ops
}

/// The patch text inside a shell command that runs apply_patch (`apply_patch <<'EOF' …`,
/// `applypatch`, or an argv `["apply_patch", "*** Begin Patch…"]` joined with spaces): from
/// `*** Begin Patch` through `*** End Patch` (or through the end of the heredoc when the end
/// marker is missing). `None` when the command does not invoke apply_patch on a patch.
pub(crate) fn patch_in_command(cmd: &str) -> Option<String> {
    let begin = cmd.find(BEGIN)?;
    let before = &cmd[..begin];
    invocation_at(before)?;
    let rest = &cmd[begin..];
    if let Some(end) = rest.find(END) {
        return Some(rest[..end + END.len()].to_string());
    }
    // No end marker: drop the heredoc's closing delimiter line (and anything after it).
    let mut body = rest;
    if let Some(delim) = heredoc_delimiter(before) {
        let mut offset = 0;
        for line in rest.split_inclusive('\n') {
            if line.trim() == delim {
                body = &rest[..offset];
                break;
            }
            offset += line.len();
        }
    }
    Some(body.trim_end().to_string())
}

/// The directory a command `cd`s into just before invoking apply_patch
/// (`cd sub/dir && apply_patch <<'EOF'`), as Codex honours it.
pub(crate) fn cd_before_patch(cmd: &str) -> Option<String> {
    let begin = cmd.find(BEGIN)?;
    let at = invocation_at(&cmd[..begin])?;
    let prefix = cmd[..at].trim_end();
    let prefix = prefix
        .strip_suffix("&&")
        .or_else(|| prefix.strip_suffix(';'))?
        .trim();
    let dir = prefix.strip_prefix("cd ")?.trim();
    let dir = unquote(dir);
    (!dir.is_empty() && !dir.contains(char::is_whitespace)).then(|| dir.to_string())
}

/// Where the last `apply_patch` / `applypatch` word starts in `before` (the command text
/// before the patch), if the patch is fed to one.
fn invocation_at(before: &str) -> Option<usize> {
    let mut found = None;
    for name in ["apply_patch", "applypatch"] {
        let mut from = 0;
        while let Some(i) = before[from..].find(name) {
            let at = from + i;
            let end = at + name.len();
            let start_ok = before[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'));
            let end_ok = before[end..]
                .chars()
                .next()
                .is_none_or(|c| c.is_whitespace() || matches!(c, '<' | '"' | '\'' | ','));
            if start_ok && end_ok {
                found = found.max(Some(at));
            }
            from = end;
        }
    }
    found
}

/// The delimiter of the last heredoc opened in `before` (`<<'EOF'`, `<<"EOF"`, `<<EOF`,
/// `<<-EOF`).
fn heredoc_delimiter(before: &str) -> Option<String> {
    let at = before.rfind("<<")?;
    let rest = before[at + 2..].trim_start_matches('-').trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect::<String>();
    let word = unquote(&word).to_string();
    (!word.is_empty()).then_some(word)
}

fn unquote(s: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// A parsed patch operation as a file touch: its path (made absolute against `base`), how
/// it touched the file, and what it wrote. Codex's and OpenCode's apply_patch both read so.
pub(crate) fn touch(op: PatchOp, base: Option<&str>) -> (String, TouchOp, Change) {
    match op {
        PatchOp::Add { path, content } => (
            absolute(&path, base),
            TouchOp::PatchAdd,
            Change::created(content),
        ),
        PatchOp::Update {
            path,
            move_to,
            hunks,
        } => (
            absolute(&path, base),
            TouchOp::PatchUpdate,
            Change::Patch {
                move_to: move_to.map(|m| absolute(&m, base)),
                hunks,
            },
        ),
        PatchOp::Delete { path } => (absolute(&path, base), TouchOp::PatchDelete, Change::Delete),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(header: Option<&str>, lines: &[&str], eof: bool) -> Hunk {
        Hunk {
            header: header.map(str::to_string),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            end_of_file: eof,
        }
    }

    #[test]
    fn add_file_content_is_the_plus_lines_with_a_trailing_newline() {
        let ops = parse_patch(
            "*** Begin Patch\n*** Add File: docs/a.md\n+# A\n+\n+text\n*** End Patch\n",
        );
        assert_eq!(
            ops,
            vec![PatchOp::Add {
                path: "docs/a.md".into(),
                content: "# A\n\ntext\n".into()
            }]
        );
    }

    #[test]
    fn an_empty_add_has_empty_content() {
        let ops = parse_patch("*** Begin Patch\n*** Add File: empty.txt\n*** End Patch");
        assert_eq!(
            ops,
            vec![PatchOp::Add {
                path: "empty.txt".into(),
                content: String::new()
            }]
        );
    }

    #[test]
    fn delete_file_has_no_body() {
        let ops = parse_patch("*** Begin Patch\n*** Delete File: src/old.ts\n*** End Patch\n");
        assert_eq!(
            ops,
            vec![PatchOp::Delete {
                path: "src/old.ts".into()
            }]
        );
    }

    #[test]
    fn update_with_move_and_headed_hunks() {
        let text = "*** Begin Patch\n*** Update File: src/server.ts\n*** Move to: src/app.ts\n@@ import express from \"express\";\n const app = express();\n-app.use(cors());\n+app.use(cors());\n+app.use(limit());\n@@ function listen() {\n-  return 1;\n+  return 2;\n*** End Patch\n";
        let ops = parse_patch(text);
        assert_eq!(
            ops,
            vec![PatchOp::Update {
                path: "src/server.ts".into(),
                move_to: Some("src/app.ts".into()),
                hunks: vec![
                    hunk(
                        Some("import express from \"express\";"),
                        &[
                            " const app = express();",
                            "-app.use(cors());",
                            "+app.use(cors());",
                            "+app.use(limit());"
                        ],
                        false
                    ),
                    hunk(
                        Some("function listen() {"),
                        &["-  return 1;", "+  return 2;"],
                        false
                    ),
                ]
            }]
        );
    }

    #[test]
    fn bare_at_at_and_end_of_file() {
        let text = "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 3\n@@\n+tail\n*** End of File\n*** End Patch";
        let ops = parse_patch(text);
        let PatchOp::Update { hunks, .. } = &ops[0] else {
            panic!("{ops:?}")
        };
        assert_eq!(
            hunks,
            &vec![
                hunk(None, &[" x = 1", "-y = 2", "+y = 3"], false),
                hunk(None, &["+tail"], true),
            ]
        );
    }

    #[test]
    fn a_first_hunk_without_at_at_is_accepted() {
        let ops = parse_patch("*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch\n");
        assert_eq!(
            ops,
            vec![PatchOp::Update {
                path: "a".into(),
                move_to: None,
                hunks: vec![hunk(None, &["-x", "+y"], false)]
            }]
        );
    }

    #[test]
    fn several_files_in_one_patch() {
        let text = "*** Begin Patch\n*** Add File: n.txt\n+new\n*** Update File: u.txt\n*** Move to: v.txt\n@@\n-a\n+b\n*** Delete File: d.txt\n*** End Patch\n";
        let ops = parse_patch(text);
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[0].path(), "n.txt");
        assert!(matches!(&ops[1], PatchOp::Update { move_to: Some(m), .. } if m == "v.txt"));
        assert_eq!(
            ops[2],
            PatchOp::Delete {
                path: "d.txt".into()
            }
        );
    }

    #[test]
    fn padded_markers_missing_end_and_missing_newline_are_tolerated() {
        let text = "  *** Begin Patch  \n *** Add File:   x.txt  \n+one\n+two";
        assert_eq!(
            parse_patch(text),
            vec![PatchOp::Add {
                path: "x.txt".into(),
                content: "one\ntwo\n".into()
            }]
        );
        let text = "*** Begin Patch\r\n*** Update File: y\r\n@@\r\n-a\r\n+b\r\n  *** End Patch  ";
        assert_eq!(
            parse_patch(text),
            vec![PatchOp::Update {
                path: "y".into(),
                move_to: None,
                hunks: vec![hunk(None, &["-a", "+b"], false)]
            }]
        );
    }

    #[test]
    fn blank_lines_inside_a_hunk_are_context_but_trailing_ones_are_not() {
        let text = "*** Begin Patch\n*** Update File: f\n@@\n a\n\n-b\n+c\n\n\n*** Update File: g\n@@\n-x\n+y\n\n";
        let ops = parse_patch(text);
        let PatchOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(hunks[0].lines, vec![" a", " ", "-b", "+c"]);
        let PatchOp::Update { hunks, .. } = &ops[1] else {
            panic!()
        };
        assert_eq!(hunks[0].lines, vec!["-x", "+y"]);
    }

    #[test]
    fn garbage_is_skipped_not_fatal() {
        assert!(parse_patch("").is_empty());
        assert!(parse_patch("hello\nworld").is_empty());
        assert!(parse_patch("*** Begin Patch\n*** End Patch").is_empty());
        let ops = parse_patch("*** Begin Patch\n*** Update File: z\nnot a hunk line\n@@\n+k\n");
        assert_eq!(ops.len(), 1);
    }

    #[test]
    fn the_patch_is_found_in_a_bash_heredoc() {
        let cmd = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\nPATCH\n";
        assert_eq!(
            patch_in_command(cmd).as_deref(),
            Some("*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch")
        );
        let cmd = "cd sub && applypatch <<\"EOF\"\n*** Begin Patch\n*** Delete File: b\n*** End Patch\nEOF";
        assert!(patch_in_command(cmd).is_some());
        assert_eq!(cd_before_patch(cmd).as_deref(), Some("sub"));
        assert_eq!(
            cd_before_patch("apply_patch <<'EOF'\n*** Begin Patch\n"),
            None
        );
    }

    #[test]
    fn the_patch_is_found_in_a_joined_argv() {
        let cmd = [
            "apply_patch",
            "*** Begin Patch\n*** Delete File: b\n*** End Patch\n",
        ]
        .join(" ");
        assert_eq!(
            patch_in_command(&cmd).as_deref(),
            Some("*** Begin Patch\n*** Delete File: b\n*** End Patch")
        );
    }

    #[test]
    fn a_heredoc_without_end_marker_stops_at_its_delimiter() {
        let cmd = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\nEOF\necho done";
        assert_eq!(
            patch_in_command(cmd).as_deref(),
            Some("*** Begin Patch\n*** Add File: a\n+x")
        );
    }

    #[test]
    fn patch_text_not_fed_to_apply_patch_is_not_a_patch() {
        assert_eq!(patch_in_command("rg '*** Begin Patch' src"), None);
        assert_eq!(
            patch_in_command("cat my_apply_patch_notes <<EOF\n*** Begin Patch\n*** End Patch\nEOF"),
            None
        );
        assert_eq!(patch_in_command("git status"), None);
    }
}
