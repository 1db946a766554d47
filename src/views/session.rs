//! What a session was, folded from its events: where it ran, when, what the person first
//! asked, what the agent said last, and how much work it did.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use super::fault::{self, Fault};
use crate::vocab::event::{Agent, Envelope, Event, Seq, SessionId, Subagent};

/// A text and where it sits, so every summary line can name the command that reads more.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Cited {
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) text: String,
}

/// A session folded from its events, invertibly: applying an event with `sign` -1 undoes
/// applying it with +1, so a revised event can be retracted exactly. Texts are not kept,
/// only where they are (`prompt_seqs`, `finals`); [`SessionSummary`] hydrates them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionRollup {
    pub(crate) agent: Option<Agent>,
    pub(crate) cwd: Option<String>,
    pub(crate) branch: Option<String>,
    pub(crate) parent: Option<SessionId>,
    /// For a subagent, what its transcript says it is: where its parent's log places it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subagent: Option<Subagent>,
    /// Earliest and latest time of the session's own activity (observations and
    /// distillations deposited about it do not count), over every version of it folded,
    /// current or replaced (see [`SessionRollup::stretch`]). Not invertible: a revision
    /// keeps its event's time, so a span only ever grows.
    pub(crate) start_ms: Option<i64>,
    pub(crate) end_ms: Option<i64>,
    pub(crate) events: i64,
    pub(crate) prompts: i64,
    pub(crate) tools: i64,
    pub(crate) failed_tools: i64,
    pub(crate) compactions: i64,
    pub(crate) files: BTreeMap<String, i64>,
    pub(crate) commits: BTreeMap<String, i64>,
    /// Seqs of the person's prompts.
    pub(crate) prompt_seqs: BTreeSet<u32>,
    /// (time, seq) of every closing message; the last is the session's.
    pub(crate) finals: BTreeSet<(i64, u32)>,
}

/// Where and from when a session worked: two fields of its [`SessionRollup`], decoded alone
/// (the rest of the row is skipped, not built) where every session is asked.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct SessionPlace {
    pub(crate) cwd: Option<String>,
    pub(crate) start_ms: Option<i64>,
}

/// Which agent ran a session and where: the first two fields of its [`SessionRollup`], what
/// a read's scope asks of every session.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct SessionOwner {
    pub(crate) agent: Option<Agent>,
    pub(crate) cwd: Option<String>,
}

impl SessionOwner {
    /// The owner a stored rollup row names. `agent` and `cwd` lead the row (the rollup's
    /// first fields, serialized in order, `branch` next), so only that head is parsed, not
    /// the row's maps of files and seqs that make a row long; a row that does not lead so is
    /// decoded whole.
    pub(crate) fn of_row(row: &[u8]) -> Result<SessionOwner, serde_json::Error> {
        let leads = row.starts_with(b"{\"agent\":");
        let head = leads
            .then(|| memchr::memmem::find(row, b",\"branch\":"))
            .flatten()
            .and_then(|end| {
                let mut head = row[..end].to_vec();
                head.push(b'}');
                serde_json::from_slice(&head).ok()
            });
        match head {
            Some(owner) => Ok(owner),
            None => serde_json::from_slice(row),
        }
    }
}

/// The sessions a read may show (its scope: a project, an agent), shared by the lanes and
/// tables that filter by it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SessionSet(std::sync::Arc<std::collections::HashSet<SessionId>>);

impl SessionSet {
    pub(crate) fn new(set: std::collections::HashSet<SessionId>) -> SessionSet {
        SessionSet(std::sync::Arc::new(set))
    }

    pub(crate) fn contains(&self, session: &SessionId) -> bool {
        self.0.contains(session)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &SessionId> {
        self.0.iter()
    }
}

/// Whether `session` is among `only` (every session is when there is no set).
pub(crate) fn admitted(only: Option<&SessionSet>, session: &SessionId) -> bool {
    only.is_none_or(|set| set.contains(session))
}

fn bump<K: Ord>(map: &mut BTreeMap<K, i64>, key: K, sign: i64) {
    match map.get_mut(&key) {
        Some(n) => {
            *n += sign;
            // Keep maps free of zero rows so a retracted key leaves no trace.
            if *n == 0 {
                map.remove(&key);
            }
        }
        None => {
            map.insert(key, sign);
        }
    }
}

impl SessionRollup {
    /// Fold one event in (`sign` +1) or back out (`sign` -1).
    pub(crate) fn apply(&mut self, seq: Seq, env: &Envelope, sign: i64) {
        self.events += sign;
        if sign > 0 {
            self.stretch(env);
        }
        match &env.kind {
            Event::SessionMeta {
                cwd,
                branch,
                agent,
                parent,
                subagent,
                ..
            } => {
                if sign > 0 {
                    self.cwd = Some(cwd.clone());
                    self.branch = branch.clone().filter(|b| !b.is_empty());
                    self.agent = *agent;
                    self.parent = parent.clone();
                    self.subagent = subagent.clone();
                } else if self.cwd.as_deref() == Some(cwd) {
                    // The meta revised into another kind: the session has none now.
                    if !fault::active(Fault::MetaRetractKeepsAgent) {
                        self.agent = None;
                        self.parent = None;
                        self.subagent = None;
                    }
                    self.cwd = None;
                    self.branch = None;
                }
            }
            Event::UserMsg { harness: false, .. } => {
                self.prompts += sign;
                set_member(&mut self.prompt_seqs, seq.0, sign);
            }
            Event::ToolCall { ok, .. } => {
                self.tools += sign;
                if !ok {
                    self.failed_tools += sign;
                }
            }
            Event::FileTouch { path, more, .. } => {
                bump(&mut self.files, path.clone(), sign);
                for t in more {
                    bump(&mut self.files, t.path.clone(), sign);
                }
            }
            Event::Committed { hash, .. } => bump(&mut self.commits, hash.clone(), sign),
            Event::Commit { hash, .. } if !hash.is_empty() => {
                bump(&mut self.commits, hash.clone(), sign)
            }
            Event::FinalMsg { .. } => set_member(&mut self.finals, (env.ts_ms, seq.0), sign),
            Event::Compaction {} => self.compactions += sign,
            _ => {}
        }
    }

    /// Stretch the span over `env`, a version of one of the session's events (folded now,
    /// or one a revision replaced: a rebuild, which folds current versions, stretches the
    /// span over the replaced ones too, so that it spans what a catch-up folded one by
    /// one, even where a revision turned the session's activity into a claim). A zero
    /// timestamp means the transcript gave none; it says nothing about the span. A claim
    /// deposited later (`peat obs --session` on an old session) is not the session's
    /// activity: it must not make the session look current.
    pub(crate) fn stretch(&mut self, env: &Envelope) {
        if env.ts_ms > 0 && is_activity(&env.kind) {
            self.start_ms = Some(self.start_ms.map_or(env.ts_ms, |s| s.min(env.ts_ms)));
            self.end_ms = Some(self.end_ms.map_or(env.ts_ms, |e| e.max(env.ts_ms)));
        }
    }

    /// The last component of the working directory: where the session ran, in a word.
    pub(crate) fn place(&self) -> String {
        let cwd = self.cwd.as_deref().unwrap_or("?");
        cwd.trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(cwd)
            .to_string()
    }

    /// The seq of the session's closing message (newest by time; the Stop hook's wins a tie).
    pub(crate) fn closing_seq(&self) -> Option<Seq> {
        self.finals.last().map(|(_, s)| Seq(*s))
    }

    pub(crate) fn first_prompt_seq(&self) -> Option<Seq> {
        self.prompt_seqs.first().map(|s| Seq(*s))
    }
}

/// The order of every "newest first" list (sessions, the closings, the session a bare read
/// means): the latest activity first, a session with none last, ties by the smaller id.
pub(crate) fn newest_first(
    (a, ra): (&SessionId, &SessionRollup),
    (b, rb): (&SessionId, &SessionRollup),
) -> std::cmp::Ordering {
    rb.end_ms.cmp(&ra.end_ms).then_with(|| a.cmp(b))
}

/// Whether an event is the session's own work, rather than something deposited about it
/// afterwards (a claim, a retired distillation), which says nothing about when it ran.
pub(crate) fn is_activity(kind: &Event) -> bool {
    !matches!(kind, Event::Obs { .. } | Event::Distill { .. })
}

fn set_member<T: Ord>(set: &mut BTreeSet<T>, v: T, sign: i64) {
    if sign > 0 {
        set.insert(v);
    } else {
        set.remove(&v);
    }
}

/// A session as listings show it: its rollup with the first prompt and closing message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SessionSummary {
    pub(crate) session: SessionId,
    #[serde(flatten)]
    pub(crate) rollup: SessionRollup,
    pub(crate) first_prompt: Option<Cited>,
    pub(crate) closing: Option<Cited>,
}

impl SessionSummary {
    /// Fill in the texts `rollup` points at, reading them with `text_of`.
    pub(crate) fn hydrate(
        session: SessionId,
        rollup: SessionRollup,
        mut text_of: impl FnMut(Seq) -> Option<(i64, String)>,
    ) -> SessionSummary {
        let mut cite = |seq: Option<Seq>| {
            let seq = seq?;
            text_of(seq).map(|(ts_ms, text)| Cited { seq, ts_ms, text })
        };
        let first_prompt = cite(rollup.first_prompt_seq());
        let closing = cite(rollup.closing_seq());
        SessionSummary {
            session,
            rollup,
            first_prompt,
            closing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(ts: i64, kind: Event) -> Envelope {
        Envelope::new(SessionId("s".into()), ts, kind)
    }

    #[test]
    fn a_sessions_place_reads_the_same_fields_as_its_rollup() {
        let rollup = SessionRollup {
            cwd: Some("/r".into()),
            start_ms: Some(10),
            files: BTreeMap::from([("/r/a.rs".to_string(), 2)]),
            ..SessionRollup::default()
        };
        let place: SessionPlace =
            serde_json::from_slice(&serde_json::to_vec(&rollup).unwrap()).unwrap();
        assert_eq!(
            place,
            SessionPlace {
                cwd: Some("/r".into()),
                start_ms: Some(10),
            }
        );
    }

    #[test]
    fn a_sessions_owner_is_read_from_the_rows_head_as_the_whole_row_gives_it() {
        let rollup = |cwd: &str, agent| SessionRollup {
            agent,
            cwd: Some(cwd.into()),
            branch: Some("main".into()),
            files: BTreeMap::from([("/r/a.rs".to_string(), 2)]),
            ..SessionRollup::default()
        };
        for r in [
            rollup("/r", Some(Agent::Codex)),
            rollup("/odd \"dir\",\"branch\":x", None),
            SessionRollup::default(),
        ] {
            let row = serde_json::to_vec(&r).unwrap();
            let whole: SessionOwner = serde_json::from_slice(&row).unwrap();
            assert_eq!(SessionOwner::of_row(&row).unwrap(), whole);
            assert_eq!((whole.agent, whole.cwd), (r.agent, r.cwd));
        }
        // A row that does not lead with them (an older layout) is decoded whole.
        let reordered = br#"{"files":{},"cwd":"/r","branch":null,"agent":"codex"}"#;
        let owner = SessionOwner::of_row(reordered).unwrap();
        assert_eq!(owner.cwd.as_deref(), Some("/r"));
        assert_eq!(owner.agent, Some(Agent::Codex));
    }

    #[test]
    fn a_meta_revised_into_another_kind_leaves_the_session_no_meta() {
        let meta = env(
            10,
            Event::SessionMeta {
                cwd: "/r".into(),
                branch: Some("main".into()),
                agent: Some(Agent::Codex),
                version: None,
                parent: Some(SessionId("p".into())),
                subagent: Some(Subagent::Compact),
            },
        );
        let said = env(10, Event::Said { text: "x".into() });
        let mut s = SessionRollup::default();
        s.apply(Seq(0), &meta, 1);
        s.apply(Seq(0), &meta, -1);
        s.apply(Seq(0), &said, 1);
        let mut plain = SessionRollup::default();
        plain.apply(Seq(0), &said, 1);
        assert_eq!(s, plain);
    }

    #[test]
    fn a_replaced_version_stretches_the_span_however_it_is_folded_now() {
        let said = |ts| env(ts, Event::Said { text: "x".into() });
        let claim = env(
            30,
            Event::Obs {
                subject: "s".into(),
                text: "x".into(),
                derived_from: vec![],
                basis: None,
            },
        );
        // A catch-up folds the narration, then its revision into a claim.
        let mut caught_up = SessionRollup::default();
        caught_up.apply(Seq(1), &said(10), 1);
        caught_up.apply(Seq(2), &said(30), 1);
        caught_up.apply(Seq(2), &said(30), -1);
        caught_up.apply(Seq(2), &claim, 1);
        // A rebuild folds the current versions, then stretches over the replaced one.
        let mut rebuilt = SessionRollup::default();
        rebuilt.apply(Seq(1), &said(10), 1);
        rebuilt.apply(Seq(2), &claim, 1);
        rebuilt.stretch(&said(30));
        assert_eq!(caught_up, rebuilt);
        assert_eq!((rebuilt.start_ms, rebuilt.end_ms), (Some(10), Some(30)));
    }

    #[test]
    fn the_newest_closing_message_wins_and_the_hook_breaks_ties() {
        let mut s = SessionRollup::default();
        s.apply(
            Seq(50),
            &env(
                20,
                Event::FinalMsg {
                    text: "late".into(),
                },
            ),
            1,
        );
        s.apply(
            Seq(18),
            &env(
                10,
                Event::FinalMsg {
                    text: "early".into(),
                },
            ),
            1,
        );
        assert_eq!(s.closing_seq(), Some(Seq(50)));
        let hook = crate::vocab::event::HOOK_FINAL_SEQ;
        s.apply(
            Seq(hook),
            &env(
                20,
                Event::FinalMsg {
                    text: "hook".into(),
                },
            ),
            1,
        );
        assert_eq!(s.closing_seq(), Some(Seq(hook)));
        assert_eq!((s.start_ms, s.end_ms), (Some(10), Some(20)));
    }

    #[test]
    fn retracting_an_event_undoes_it_exactly() {
        let events = [
            (
                Seq(0),
                env(
                    1,
                    Event::SessionMeta {
                        cwd: "/r".into(),
                        branch: None,
                        agent: None,
                        version: None,
                        parent: None,
                        subagent: None,
                    },
                ),
            ),
            (
                Seq(2),
                env(
                    2,
                    Event::UserMsg {
                        text: "go".into(),
                        harness: false,
                        context: None,
                    },
                ),
            ),
            (
                Seq(3),
                env(
                    3,
                    Event::ToolCall {
                        tool: "Bash".into(),
                        detail: "x".into(),
                        ok: false,
                        agent: None,
                    },
                ),
            ),
            (
                Seq(4),
                env(
                    3,
                    Event::FinalMsg {
                        text: "done".into(),
                    },
                ),
            ),
        ];
        let mut s = SessionRollup::default();
        for (seq, e) in &events[..3] {
            s.apply(*seq, e, 1);
        }
        let before = s.clone();
        s.apply(events[3].0, &events[3].1, 1);
        s.apply(events[3].0, &events[3].1, -1);
        assert_eq!(s, before);
        let demoted = env(
            3,
            Event::Said {
                text: "done".into(),
            },
        );
        s.apply(Seq(4), &demoted, 1);
        assert_eq!(s.closing_seq(), None);
    }

    #[test]
    fn a_claim_deposited_later_does_not_extend_the_span() {
        let mut s = SessionRollup::default();
        let said = Event::Said { text: "ok".into() };
        s.apply(Seq(1), &env(10, said.clone()), 1);
        s.apply(Seq(2), &env(20, said), 1);
        let obs = Event::Obs {
            subject: "staging".into(),
            text: "blue first".into(),
            derived_from: vec![1],
            basis: None,
        };
        s.apply(Seq(crate::vocab::event::OBS_SEQ_BASE), &env(9_000, obs), 1);
        assert_eq!((s.start_ms, s.end_ms), (Some(10), Some(20)));
        assert_eq!(s.events, 3);
    }

    #[test]
    fn harness_text_is_not_a_prompt() {
        let mut s = SessionRollup::default();
        s.apply(
            Seq(2),
            &env(
                1,
                Event::UserMsg {
                    text: "<command-name>/clear".into(),
                    harness: true,
                    context: None,
                },
            ),
            1,
        );
        s.apply(
            Seq(34),
            &env(
                2,
                Event::UserMsg {
                    text: "fix the parser".into(),
                    harness: false,
                    context: None,
                },
            ),
            1,
        );
        assert_eq!(s.prompts, 1);
        assert_eq!(s.first_prompt_seq(), Some(Seq(34)));
    }
}
