//! Recognising the commits an agent made: the command that made one, and the hash its
//! output printed. Shared by both parsers: the command is on the tool call, the output on
//! its result (in Claude Code, a later line).

use crate::vocab::event::{COMMIT_MESSAGE_CAP, Event, Vcs, cap};

/// A commit-making command seen on a tool call, waiting for its output.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PendingCommit {
    pub(crate) vcs: Vcs,
    /// `jj commit` reports the new commit as the parent of the new working copy.
    pub(crate) reports_parent: bool,
    /// The `-m` message from the command, used when the output does not repeat it.
    pub(crate) message: Option<String>,
}

/// Whether `cmd` makes (or describes) a commit: `git commit`, `git -C dir commit`,
/// `jj commit`, `jj describe`. Chained commands (`git add . && git commit -m x`) count.
pub(crate) fn commit_command(cmd: &str) -> Option<PendingCommit> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let tool = w.rsplit('/').next().unwrap_or(w);
        let (vcs, verbs): (Vcs, &[&str]) = match tool {
            "git" => (Vcs::Git, &["commit"]),
            "jj" => (Vcs::Jj, &["commit", "describe", "desc", "ci"]),
            _ => continue,
        };
        // The subcommand is the first word after the tool that is not an option or an
        // option's value (`git -C dir commit`, `jj --repo r describe`).
        let mut j = i + 1;
        while j < words.len() {
            let w = words[j];
            if matches!(
                w,
                "-C" | "-c" | "--repo" | "-R" | "--git-dir" | "--work-tree"
            ) {
                j += 2;
            } else if w.starts_with('-') {
                j += 1;
            } else {
                break;
            }
        }
        let Some(verb) = words.get(j) else { continue };
        if verbs.contains(verb) {
            let rest = words[j..].join(" ");
            return Some(PendingCommit {
                vcs,
                reports_parent: vcs == Vcs::Jj && matches!(*verb, "commit" | "ci"),
                message: message_from_command(&rest),
            });
        }
    }
    None
}

/// The text after the first `-m`/`--message`: a quoted string, or one word.
fn message_from_command(cmd: &str) -> Option<String> {
    let at = ["-m ", "--message ", "--message=", "-m\"", "-m'"]
        .iter()
        .filter_map(|flag| {
            cmd.find(flag)
                .map(|i| i + flag.trim_end_matches(['"', '\'']).len())
        })
        .min()?;
    let rest = cmd[at..].trim_start();
    let msg = match rest.chars().next()? {
        q @ ('"' | '\'') => {
            let body = &rest[1..];
            body.find(q).map_or(body, |end| &body[..end])
        }
        _ => rest.split_whitespace().next().unwrap_or(""),
    };
    let msg = msg.trim();
    (!msg.is_empty()).then(|| cap(msg, COMMIT_MESSAGE_CAP))
}

/// The commit the output of `pending`'s command reports, if it reports one.
pub(crate) fn commit_from_output(pending: &PendingCommit, output: &str) -> Option<Event> {
    match pending.vcs {
        Vcs::Git => git_commit_line(output).map(|(branch, hash, message)| Event::Committed {
            vcs: Vcs::Git,
            hash,
            message: cap(&message, COMMIT_MESSAGE_CAP),
            branch: Some(branch),
        }),
        Vcs::Jj => {
            let wanted: &[&str] = if pending.reports_parent {
                &["Parent commit"]
            } else {
                &["Working copy"]
            };
            output.lines().find_map(|line| {
                let line = line.trim();
                if !wanted.iter().any(|w| line.starts_with(w)) {
                    return None;
                }
                let (_, rest) = line.split_once(": ")?;
                let mut words = rest.split_whitespace();
                let _change = words.next()?;
                let hash = words.next()?;
                if !is_hex(hash) {
                    return None;
                }
                let described: String = words.collect::<Vec<_>>().join(" ");
                let message = if described.is_empty() || described.starts_with("(no description") {
                    pending.message.clone().unwrap_or_default()
                } else {
                    described
                };
                Some(Event::Committed {
                    vcs: Vcs::Jj,
                    hash: hash.to_string(),
                    message: cap(&message, COMMIT_MESSAGE_CAP),
                    branch: None,
                })
            })
        }
    }
}

/// `[main abc1234] message` or `[main (root-commit) abc1234] message`, at the start of a line
/// or after the `Output: ` that Qwen Code's shell report puts before the command's first line.
fn git_commit_line(output: &str) -> Option<(String, String, String)> {
    output.lines().find_map(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("Output: ").unwrap_or(line);
        let inner = line.strip_prefix('[')?;
        let (head, message) = inner.split_once("] ")?;
        let mut words: Vec<&str> = head.split_whitespace().collect();
        let hash = words.pop()?;
        if !is_hex(hash) || hash.len() < 7 {
            return None;
        }
        let branch = words.first()?.to_string();
        Some((branch, hash.to_string(), message.trim().to_string()))
    })
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_commands_are_recognised() {
        let c = commit_command("git add -A && git commit -m \"fix: the parser\"").unwrap();
        assert_eq!(c.vcs, Vcs::Git);
        assert_eq!(c.message.as_deref(), Some("fix: the parser"));
        assert!(commit_command("git -C /repo commit -am wip").is_some());
        assert!(commit_command("jj describe -m 'fold: fix'").is_some());
        assert!(commit_command("jj commit -m x").unwrap().reports_parent);
        assert!(commit_command("git status").is_none());
        assert!(commit_command("git log --oneline").is_none());
        assert!(commit_command("cargo test").is_none());
    }

    #[test]
    fn git_output_yields_the_hash() {
        let p = commit_command("git commit -m 'x'").unwrap();
        let out = "[feat/limits 4be1c0a] Add limiter\n 1 file changed, 3 insertions(+)\n";
        match commit_from_output(&p, out) {
            Some(Event::Committed {
                hash,
                message,
                branch,
                ..
            }) => {
                assert_eq!(hash, "4be1c0a");
                assert_eq!(message, "Add limiter");
                assert_eq!(branch.as_deref(), Some("feat/limits"));
            }
            other => panic!("{other:?}"),
        }
        let root = "[main (root-commit) 0123abcd] first\n";
        assert!(commit_from_output(&p, root).is_some());
        assert!(commit_from_output(&p, "nothing to commit, working tree clean").is_none());
        let qwen = "Command: git commit -m 'x'\nDirectory: (root)\nOutput: [main 5e6f7a8] x\n 1 file changed\nError: (none)\nExit Code: 0";
        assert!(matches!(
            commit_from_output(&p, qwen),
            Some(Event::Committed { hash, .. }) if hash == "5e6f7a8"
        ));
    }

    #[test]
    fn jj_output_yields_the_hash() {
        let p = commit_command("jj commit -m 'add tests'").unwrap();
        let out = "Working copy  (@) now at: qzmtwxyz 9f8e7d6c (empty) (no description set)\nParent commit (@-)      : kkmpptxz 1a2b3c4d add tests\n";
        match commit_from_output(&p, out) {
            Some(Event::Committed { hash, message, .. }) => {
                assert_eq!(hash, "1a2b3c4d");
                assert_eq!(message, "add tests");
            }
            other => panic!("{other:?}"),
        }
        let d = commit_command("jj describe -m 'fold: fix'").unwrap();
        let out = "Working copy  (@) now at: qzmtwxyz 9f8e7d6c fold: fix\n";
        assert!(
            matches!(commit_from_output(&d, out), Some(Event::Committed { hash, .. }) if hash == "9f8e7d6c")
        );
    }
}
