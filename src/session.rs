//! What a session was, folded from its events: where it ran, when, what the person first
//! asked, what the agent said last, and how much work it did.

use serde::Serialize;
use std::collections::BTreeSet;

use crate::event::{Agent, Envelope, Event, Seq, SessionId};

/// A text and where it sits, so every summary line can name the command that reads more.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cited {
    pub seq: Seq,
    pub ts_ms: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionSummary {
    pub session: SessionId,
    pub agent: Option<Agent>,
    pub cwd: Option<String>,
    pub branch: Option<String>,
    pub parent: Option<SessionId>,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub events: usize,
    /// Messages the person typed (not harness injections).
    pub prompts: usize,
    pub tools: usize,
    pub failed_tools: usize,
    pub files: BTreeSet<String>,
    pub commits: Vec<String>,
    pub compactions: usize,
    pub first_prompt: Option<Cited>,
    /// The newest closing message (by time, then seq: the Stop hook's wins a tie).
    pub closing: Option<Cited>,
}

impl SessionSummary {
    pub fn new(session: SessionId) -> SessionSummary {
        SessionSummary {
            session,
            agent: None,
            cwd: None,
            branch: None,
            parent: None,
            start_ms: None,
            end_ms: None,
            events: 0,
            prompts: 0,
            tools: 0,
            failed_tools: 0,
            files: BTreeSet::new(),
            commits: Vec::new(),
            compactions: 0,
            first_prompt: None,
            closing: None,
        }
    }

    /// Fold one event in. Events may arrive in any order.
    pub fn apply(&mut self, seq: Seq, env: &Envelope) {
        self.events += 1;
        // A zero timestamp means the transcript gave none; it says nothing about the span.
        if env.ts_ms > 0 {
            self.start_ms = Some(self.start_ms.map_or(env.ts_ms, |s| s.min(env.ts_ms)));
            self.end_ms = Some(self.end_ms.map_or(env.ts_ms, |e| e.max(env.ts_ms)));
        }
        let cited = |text: &str| Cited {
            seq,
            ts_ms: env.ts_ms,
            text: text.to_string(),
        };
        match &env.kind {
            Event::SessionMeta {
                cwd,
                branch,
                agent,
                parent,
                ..
            } => {
                self.cwd = Some(cwd.clone());
                self.branch = branch.clone().filter(|b| !b.is_empty());
                self.agent = *agent;
                self.parent = parent.clone();
            }
            Event::UserMsg {
                text,
                harness: false,
            } => {
                self.prompts += 1;
                if self.first_prompt.as_ref().is_none_or(|f| seq < f.seq) {
                    self.first_prompt = Some(cited(text));
                }
            }
            Event::ToolCall { ok, .. } => {
                self.tools += 1;
                if !ok {
                    self.failed_tools += 1;
                }
            }
            Event::FileTouch { path, more, .. } => {
                self.files.insert(path.clone());
                self.files.extend(more.iter().map(|t| t.path.clone()));
            }
            Event::Committed { hash, .. } => self.commits.push(hash.clone()),
            Event::Commit { hash, .. } if !hash.is_empty() => self.commits.push(hash.clone()),
            Event::FinalMsg { text } => {
                let newer = self
                    .closing
                    .as_ref()
                    .is_none_or(|c| (env.ts_ms, seq) >= (c.ts_ms, c.seq));
                if newer {
                    self.closing = Some(cited(text));
                }
            }
            Event::Compaction {} => self.compactions += 1,
            _ => {}
        }
    }

    /// The last component of the working directory: where the session ran, in a word.
    pub fn place(&self) -> String {
        let cwd = self.cwd.as_deref().unwrap_or("?");
        cwd.trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(cwd)
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(ts: i64, kind: Event) -> Envelope {
        Envelope::new(SessionId("s".into()), ts, kind)
    }

    #[test]
    fn the_newest_closing_message_wins_and_the_hook_breaks_ties() {
        let mut s = SessionSummary::new(SessionId("s".into()));
        s.apply(
            Seq(50),
            &env(
                20,
                Event::FinalMsg {
                    text: "late".into(),
                },
            ),
        );
        s.apply(
            Seq(18),
            &env(
                10,
                Event::FinalMsg {
                    text: "early".into(),
                },
            ),
        );
        assert_eq!(s.closing.as_ref().unwrap().text, "late");
        s.apply(
            Seq(crate::event::HOOK_FINAL_SEQ),
            &env(
                20,
                Event::FinalMsg {
                    text: "hook".into(),
                },
            ),
        );
        assert_eq!(s.closing.as_ref().unwrap().text, "hook");
        assert_eq!((s.start_ms, s.end_ms), (Some(10), Some(20)));
    }

    #[test]
    fn harness_text_is_not_a_prompt() {
        let mut s = SessionSummary::new(SessionId("s".into()));
        s.apply(
            Seq(2),
            &env(
                1,
                Event::UserMsg {
                    text: "<command-name>/clear".into(),
                    harness: true,
                },
            ),
        );
        s.apply(
            Seq(34),
            &env(
                2,
                Event::UserMsg {
                    text: "fix the parser".into(),
                    harness: false,
                },
            ),
        );
        assert_eq!(s.prompts, 1);
        assert_eq!(s.first_prompt.unwrap().text, "fix the parser");
    }
}

/// Every session's summary, newest activity first.
pub fn summarize_all(
    ledger: &crate::ledger::Ledger,
) -> Result<Vec<SessionSummary>, crate::ledger::LedgerError> {
    let mut out: Vec<SessionSummary> = Vec::new();
    for item in ledger.events() {
        let (id, env) = item?;
        if out.last().is_none_or(|s| s.session != id.session) {
            out.push(SessionSummary::new(id.session.clone()));
        }
        if let Some(s) = out.last_mut() {
            s.apply(id.seq, &env);
        }
    }
    out.sort_by(|a, b| {
        b.end_ms
            .cmp(&a.end_ms)
            .then_with(|| a.session.cmp(&b.session))
    });
    Ok(out)
}

/// Why a session prefix did not name one session.
#[derive(Debug, PartialEq)]
pub enum NoSession {
    None,
    Ambiguous(Vec<SessionId>),
}

/// The session `prefix` names: an exact id, else the one id that starts with it. A parent
/// session wins over its own subagents (`<parent>/agent-…`).
pub fn resolve_prefix(
    ledger: &crate::ledger::Ledger,
    prefix: &str,
) -> Result<Result<SessionId, NoSession>, crate::ledger::LedgerError> {
    let all = ledger.sessions()?;
    Ok(pick(all, prefix))
}

fn pick(all: Vec<SessionId>, prefix: &str) -> Result<SessionId, NoSession> {
    if let Some(exact) = all.iter().find(|s| s.as_str() == prefix) {
        return Ok(exact.clone());
    }
    let matching: Vec<SessionId> = all
        .into_iter()
        .filter(|s| s.as_str().starts_with(prefix))
        .collect();
    let top: Vec<&SessionId> = matching
        .iter()
        .filter(|s| !s.as_str().contains('/'))
        .collect();
    match (top.as_slice(), matching.as_slice()) {
        ([one], _) => Ok((*one).clone()),
        ([], [one]) => Ok(one.clone()),
        (_, []) => Err(NoSession::None),
        _ => Err(NoSession::Ambiguous(matching)),
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<SessionId> {
        v.iter().map(|s| SessionId(s.to_string())).collect()
    }

    #[test]
    fn a_prefix_names_one_session_or_says_why_not() {
        let all = ids(&["2d98aa", "2d98aa/agent-1", "3f00", "3f01"]);
        assert_eq!(pick(all.clone(), "2d98"), Ok(SessionId("2d98aa".into())));
        assert_eq!(
            pick(all.clone(), "2d98aa/agent-1"),
            Ok(SessionId("2d98aa/agent-1".into()))
        );
        assert!(matches!(pick(all.clone(), "3f0"), Err(NoSession::Ambiguous(v)) if v.len() == 2));
        assert_eq!(pick(all, "zz"), Err(NoSession::None));
    }
}
