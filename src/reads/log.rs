//! A session in causal order: each prompt, the tool calls it led to (files touched with the
//! size of each change, commands run, failures), the commits made, the closing messages, and
//! the subagent sessions it started, nested under the call that started them.
//!
//! A subagent is placed by the record first: under the call whose result named it (a Claude
//! `Task`/`Agent` call records the agent id it started; a Codex `spawn_agent` call the thread
//! id that is the subagent rollout's own session id, or in multi-agent v2 the agent path its
//! rollout's `session_meta` gives), and the harness's compaction agent (Claude's
//! `acompact-…`, a Codex `compact` sub-thread) at the compaction it wrote. What no record
//! links falls back to time, and says so: a ledger captured before calls recorded their
//! agent (the last agent-starting call before the subagent began), or a Codex `review`
//! sub-thread, which the person started, not a call (the last step before it began).
//!
//! The steps are materialised by the views' fold ([`crate::views::steps`], each edit sized
//! from its change blob while the ledger is open anyway), so a log is a prefix scan of the
//! steps view and never opens the ledger.

use serde::Serialize;

use crate::views::session::SessionRollup;
use crate::views::steps::Step;
use crate::views::tables::Table;
use crate::views::{ViewError, Views};
use crate::vocab::event::{HOOK_FINAL_SEQ, Seq, SessionId, Subagent};

/// How deep subagents nest in a log (a subagent's own subagents, and so on).
const MAX_DEPTH: usize = 4;

/// The tools that start a subagent: Claude Code's `Task` (later `Agent`), Codex's
/// `spawn_agent`.
const SPAWN_TOOLS: [&str; 3] = ["Task", "Agent", "spawn_agent"];

/// One step with where it sits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Entry {
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    #[serde(flatten)]
    pub(crate) step: Step,
    /// The subagent sessions this call started.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) subagents: Vec<SessionLog>,
}

/// A session's log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SessionLog {
    pub(crate) session: SessionId,
    #[serde(flatten)]
    pub(crate) rollup: SessionRollup,
    pub(crate) entries: Vec<Entry>,
    /// Subagents whose starting call could not be found (they started before the first step).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) unplaced_subagents: Vec<SessionLog>,
    /// For a subagent: what placed it in its parent's log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) placed: Option<Placed>,
}

/// What placed a subagent's log in its parent's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Placed {
    /// The call whose result named the agent it started.
    Call,
    /// The compaction the harness's compaction agent wrote.
    Compaction,
    /// No record links it: the last agent-starting call before it began.
    Time,
}

/// The closing message the Stop hook recorded (at `end`) is a copy of one the transcript
/// holds once that is captured: said once, at the transcript's moment. Kept when it is the
/// only copy (a turn the transcript has not written yet).
fn drop_hook_copy(entries: &mut Vec<Entry>) {
    let closing = |e: &Entry| match &e.step {
        Step::Closing { text } => Some(text.trim().to_string()),
        _ => None,
    };
    let Some(hook) = entries.iter().position(|e| e.seq == Seq(HOOK_FINAL_SEQ)) else {
        return;
    };
    let Some(text) = closing(&entries[hook]) else {
        return;
    };
    let copied = entries
        .iter()
        .enumerate()
        .any(|(i, e)| i != hook && closing(e).as_deref() == Some(text.as_str()));
    if copied {
        entries.remove(hook);
    }
}

/// The log of `session`, with its subagents nested.
pub(crate) fn session_log(views: &Views, session: &SessionId) -> Result<SessionLog, ViewError> {
    let sessions = views.tables.all_sessions()?;
    build(views, &sessions, session, 0, None)
}

/// The steps of `session` from the steps view, in seq order: (seq, time, step).
pub(crate) fn session_steps(
    views: &Views,
    session: &SessionId,
) -> Result<Vec<(Seq, i64, Step)>, ViewError> {
    let mut prefix = session.as_str().as_bytes().to_vec();
    prefix.push(0);
    let mut out = Vec::new();
    for row in views.tables.scan(Table::Steps, &prefix) {
        let (key, value) = row?;
        // The event key, then the step's index (two bytes).
        let Some(id) = key
            .len()
            .checked_sub(2)
            .and_then(|n| crate::ledger::decode_event_key(&key[..n]))
        else {
            continue;
        };
        let (ts_ms, step): (i64, Step) =
            serde_json::from_slice(&value).map_err(|e| ViewError::Corrupt(e.to_string()))?;
        out.push((id.seq, ts_ms, step));
    }
    Ok(out)
}

fn build(
    views: &Views,
    sessions: &[(SessionId, SessionRollup)],
    session: &SessionId,
    depth: usize,
    placed: Option<Placed>,
) -> Result<SessionLog, ViewError> {
    let rollup = sessions
        .iter()
        .find(|(s, _)| s == session)
        .map(|(_, r)| r.clone())
        .unwrap_or_default();
    let entries = session_steps(views, session)?;
    let mut entries: Vec<Entry> = entries
        .into_iter()
        .map(|(seq, ts_ms, step)| Entry {
            seq,
            ts_ms,
            step,
            subagents: Vec::new(),
        })
        .collect();
    drop_hook_copy(&mut entries);
    let mut unplaced = Vec::new();
    if depth < MAX_DEPTH {
        let mut children: Vec<&(SessionId, SessionRollup)> = sessions
            .iter()
            .filter(|(_, r)| r.parent.as_ref() == Some(session))
            .collect();
        children.sort_by_key(|(s, r)| (r.start_ms, s.clone()));
        for (child, r) in children {
            let start = r.start_ms.unwrap_or(i64::MAX);
            match place(&entries, child, r.subagent.as_ref(), start) {
                Some((i, how)) => {
                    let log = build(views, sessions, child, depth + 1, Some(how))?;
                    entries[i].subagents.push(log);
                }
                None => unplaced.push(build(views, sessions, child, depth + 1, None)?),
            }
        }
    }
    Ok(SessionLog {
        session: session.clone(),
        rollup,
        entries,
        unplaced_subagents: unplaced,
        placed,
    })
}

/// Where the subagent `child`, which began at `start` and whose transcript says it is `kind`,
/// sits among its parent's entries: see the module documentation.
fn place(
    entries: &[Entry],
    child: &SessionId,
    kind: Option<&Subagent>,
    start: i64,
) -> Option<(usize, Placed)> {
    // What a call's result names it by: a Claude subagent's agent id, or (a Codex subagent)
    // its own session id, the thread id `spawn_agent` answered with, or its agent path.
    let id = child.subagent().map_or(child.as_str(), |(_, agent)| agent);
    let path = match kind {
        Some(Subagent::Spawned { path }) => Some(path.as_str()),
        _ => None,
    };
    let names = |e: &Entry| match &e.step {
        Step::Tool { agent: Some(a), .. } => a == id || Some(a.as_str()) == path,
        _ => false,
    };
    // An agent path can be used again once its agent is closed: the last call that named it
    // before the subagent began, else (clocks disagreeing) the first.
    let by_call = entries
        .iter()
        .rposition(|e| names(e) && e.ts_ms <= start)
        .or_else(|| entries.iter().position(names));
    if let Some(i) = by_call {
        return Some((i, Placed::Call));
    }
    if child.is_compactor() || kind == Some(&Subagent::Compact) {
        // The compaction lands when the agent has written its summary, after it began.
        let compaction = |e: &Entry| matches!(e.step, Step::Compaction);
        let at = entries
            .iter()
            .position(|e| compaction(e) && e.ts_ms >= start)
            .or_else(|| entries.iter().rposition(compaction));
        if let Some(i) = at {
            return Some((i, Placed::Compaction));
        }
    }
    let by_time = if kind == Some(&Subagent::Review) {
        // The person asked for the review: no agent-starting call led to it.
        last_before(entries, start)
    } else {
        starting_call(entries, start)
    };
    by_time.map(|i| (i, Placed::Time))
}

/// The time rule, for a subagent no record links: the last agent-starting tool call (see
/// [`SPAWN_TOOLS`]) at or before `start`, else the last step of any kind at or before it.
fn starting_call(entries: &[Entry], start: i64) -> Option<usize> {
    let spawns = |e: &Entry| matches!(&e.step, Step::Tool { tool, .. } if SPAWN_TOOLS.contains(&tool.as_str()));
    entries
        .iter()
        .rposition(|e| e.ts_ms <= start && spawns(e))
        .or_else(|| last_before(entries, start))
}

/// The last step at or before `start`.
fn last_before(entries: &[Entry], start: i64) -> Option<usize> {
    entries.iter().rposition(|e| e.ts_ms <= start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::files::fixture::{Store, touch};
    use crate::vocab::change::{Change, Replacement};
    use crate::vocab::diff::Size;
    use crate::vocab::event::{Event, TouchOp, Vcs};

    #[test]
    fn a_log_is_read_from_the_steps_view_with_each_edit_sized_and_subagents_nested() {
        let store = Store::new();
        let edit = Change::Edit(Replacement {
            old: "a\nb\n".into(),
            new: "a\nc\nd\n".into(),
            replace_all: false,
        });
        let tool = |tool: &str, ok| Event::ToolCall {
            tool: tool.into(),
            detail: "go".into(),
            ok,
            agent: None,
        };
        let meta = |parent: Option<&str>| Event::SessionMeta {
            cwd: "/r".into(),
            branch: None,
            agent: None,
            version: None,
            parent: parent.map(|p| SessionId(p.into())),
            subagent: None,
        };
        store.write(
            vec![
                ("main", 0, 1_000, meta(None)),
                (
                    "main",
                    1,
                    1_000,
                    Event::UserMsg {
                        text: "fix it".into(),
                        harness: false,
                        context: None,
                    },
                ),
                ("main", 2, 2_000, tool("Task", true)),
                ("main", 3, 3_000, touch("/r/x.rs", TouchOp::Edit, &edit)),
                ("main", 4, 4_000, tool("Bash", false)),
                (
                    "main",
                    5,
                    5_000,
                    Event::Committed {
                        vcs: Vcs::Git,
                        hash: "abc1234".into(),
                        message: "fix".into(),
                        branch: None,
                    },
                ),
                (
                    "main",
                    6,
                    6_000,
                    Event::Said {
                        text: "narration is left out".into(),
                    },
                ),
                (
                    "main",
                    7,
                    7_000,
                    Event::FinalMsg {
                        text: "done".into(),
                    },
                ),
                ("sub", 0, 2_500, meta(Some("main"))),
                ("sub", 1, 2_500, tool("Read", true)),
            ],
            &[&edit],
        );
        let (ledger, views) = store.open();
        let log = session_log(&views, &SessionId("main".into())).unwrap();
        let seqs: Vec<u32> = log.entries.iter().map(|e| e.seq.0).collect();
        assert_eq!(seqs, vec![1, 2, 3, 4, 5, 7]);
        assert_eq!(
            log.entries[2].step,
            Step::Edit {
                path: "/r/x.rs".into(),
                op: TouchOp::Edit,
                failed: false,
                size: Size {
                    added: 2,
                    removed: 1
                },
                model: None,
            }
        );
        assert_eq!(log.entries[2].ts_ms, 3_000);
        assert!(matches!(&log.entries[3].step, Step::Tool { ok: false, .. }));
        assert!(matches!(&log.entries[4].step, Step::Commit { hash, .. } if hash == "abc1234"));
        assert_eq!(
            log.entries[5].step,
            Step::Closing {
                text: "done".into()
            }
        );
        let nested: Vec<&SessionId> = log.entries[1]
            .subagents
            .iter()
            .map(|l| &l.session)
            .collect();
        assert_eq!(
            nested,
            vec![&SessionId("sub".into())],
            "under the Task call"
        );
        assert!(!ledger.is_open(), "the log opened the ledger");
    }

    fn entry(ts_ms: i64, tool: &str) -> Entry {
        Entry {
            seq: Seq(0),
            ts_ms,
            step: Step::Tool {
                tool: tool.into(),
                detail: String::new(),
                ok: true,
                agent: None,
            },
            subagents: Vec::new(),
        }
    }

    fn started(ts_ms: i64, agent: &str) -> Entry {
        let mut e = entry(ts_ms, "Task");
        if let Step::Tool { agent: a, .. } = &mut e.step {
            *a = Some(agent.into());
        }
        e
    }

    fn compaction(ts_ms: i64) -> Entry {
        Entry {
            step: Step::Compaction,
            ..entry(ts_ms, "")
        }
    }

    const HOUR: i64 = 3_600_000;

    #[test]
    fn a_subagent_nests_under_the_call_that_named_it_however_late_it_began() {
        let entries = [
            started(0, "a1"),
            entry(HOUR, "Bash"),
            started(2 * HOUR, "b2"),
        ];
        let child = |agent: &str| SessionId(format!("p/agent-{agent}"));
        // a1 began four hours after the last Task call: still under its own.
        assert_eq!(
            place(&entries, &child("a1"), None, 6 * HOUR),
            Some((0, Placed::Call))
        );
        assert_eq!(
            place(&entries, &child("b2"), None, 6 * HOUR),
            Some((2, Placed::Call))
        );
        // No call names it: the time rule, said as such.
        assert_eq!(
            place(&entries, &child("c3"), None, 6 * HOUR),
            Some((2, Placed::Time))
        );
    }

    #[test]
    fn a_compaction_agent_nests_at_the_compaction_it_wrote() {
        let entries = [
            compaction(HOUR),
            started(2 * HOUR, "a1"),
            entry(3 * HOUR, "Bash"),
            compaction(6 * HOUR),
            entry(7 * HOUR, "Bash"),
        ];
        let compactor = SessionId("p/agent-acompact-5d1e0f".into());
        // It ran 4:00-6:00; the compaction it wrote landed at 6:00, not under the Task call.
        assert_eq!(
            place(&entries, &compactor, None, 4 * HOUR),
            Some((3, Placed::Compaction))
        );
        // A compaction agent whose compaction is not recorded after it: the last one.
        assert_eq!(
            place(&entries[..3], &compactor, None, 4 * HOUR),
            Some((0, Placed::Compaction))
        );
    }

    #[test]
    fn a_codex_subagent_nests_under_the_spawn_agent_call_that_named_its_thread() {
        let spawn = |ts_ms: i64, thread: Option<&str>| {
            let mut e = entry(ts_ms, "spawn_agent");
            if let Step::Tool { agent, .. } = &mut e.step {
                *agent = thread.map(str::to_string);
            }
            e
        };
        let (first, second) = (
            "019a7c3e-0001-7d40-9c1e-2f6a8b0c4d11",
            "019a7c3e-0002-7d40-9c1e-2f6a8b0c4d11",
        );
        let entries = [
            spawn(0, Some(first)),
            entry(HOUR, "exec_command"),
            spawn(2 * HOUR, Some(second)),
            spawn(3 * HOUR, None),
        ];
        // The first thread began after every spawn: still under the call that named it.
        assert_eq!(
            place(&entries, &SessionId(first.into()), None, 4 * HOUR),
            Some((0, Placed::Call))
        );
        assert_eq!(
            place(&entries, &SessionId(second.into()), None, 4 * HOUR),
            Some((2, Placed::Call))
        );
        // A thread no call names: the last spawn_agent before it began, by time.
        assert_eq!(
            place(&entries, &SessionId("019a7c3e-0003".into()), None, 4 * HOUR),
            Some((3, Placed::Time))
        );
    }

    #[test]
    fn a_codex_sub_thread_is_placed_by_what_its_transcript_says_it_is() {
        let spawn = |ts_ms: i64, path: &str| {
            let mut e = entry(ts_ms, "spawn_agent");
            if let Step::Tool { agent, .. } = &mut e.step {
                *agent = Some(path.into());
            }
            e
        };
        let entries = [
            spawn(0, "/root/tester"),
            entry(HOUR, "exec_command"),
            spawn(2 * HOUR, "/root/explorer"),
            compaction(5 * HOUR),
            // The tester was closed and its path used again.
            spawn(6 * HOUR, "/root/tester"),
            entry(7 * HOUR, "exec_command"),
        ];
        let thread = SessionId("019a7c41-0009-7d40-9c1e-2f6a8b0c4d11".into());
        let spawned = |path: &str| Subagent::Spawned { path: path.into() };
        // Multi-agent v2 names the agent path: under that call, though it began after another.
        assert_eq!(
            place(&entries, &thread, Some(&spawned("/root/tester")), 3 * HOUR),
            Some((0, Placed::Call))
        );
        assert_eq!(
            place(&entries, &thread, Some(&spawned("/root/tester")), 6 * HOUR),
            Some((4, Placed::Call))
        );
        assert_eq!(
            place(
                &entries,
                &thread,
                Some(&spawned("/root/explorer")),
                4 * HOUR
            ),
            Some((2, Placed::Call))
        );
        // A path no call names: the time rule, said as such.
        assert_eq!(
            place(&entries, &thread, Some(&spawned("/root/other")), 4 * HOUR),
            Some((2, Placed::Time))
        );
        // A compaction sub-thread, begun at 4:00, at the compaction it wrote at 5:00.
        assert_eq!(
            place(&entries, &thread, Some(&Subagent::Compact), 4 * HOUR),
            Some((3, Placed::Compaction))
        );
        // A review the person asked for at 7:30: after the last step, not under a spawn call.
        assert_eq!(
            place(
                &entries,
                &thread,
                Some(&Subagent::Review),
                7 * HOUR + HOUR / 2
            ),
            Some((5, Placed::Time))
        );
    }

    #[test]
    fn an_unlinked_subagent_nests_under_the_last_task_call_before_it_started() {
        let entries = [
            entry(1, "Bash"),
            entry(2, "Task"),
            entry(3, "Bash"),
            entry(9, "Task"),
        ];
        assert_eq!(starting_call(&entries, 5), Some(1));
        assert_eq!(starting_call(&entries, 9), Some(3));
        // No Task call before it: the last step before it.
        assert_eq!(starting_call(&entries[..1], 5), Some(0));
        assert_eq!(starting_call(&entries, 0), None);
    }
}
