//! The tools `peat mcp` offers, one per read: the arguments a model passes (their doc
//! comments become the input schema's descriptions, so they are written for a model) and the
//! command line of the read that answers them. A tool computes nothing itself: the read's
//! own command does, so the tool and the command cannot drift apart.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The argument every tool takes for paging, handled by the server rather than the read.
pub(crate) const CURSOR: &str = "cursor";

/// One tool: its name, what it is for, its input schema, and how its arguments become a read.
pub(crate) struct Tool {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) schema: Arc<JsonObject>,
    parse: fn(Map<String, Value>) -> Result<Read, String>,
}

/// The read that answers a call: `peat` with these words, and where its `--json` answer
/// holds the list that long answers are paged by.
#[derive(Debug, PartialEq)]
pub(crate) struct Read {
    /// The verb and its flags, before `--json`.
    pub(crate) flags: Vec<String>,
    /// The positional words, after `--` (so a word that starts with `-` is never a flag).
    pub(crate) words: Vec<String>,
    /// A JSON pointer to the list paged (`""`: the answer is the list).
    pub(crate) list: &'static str,
    /// What the answer must be to answer this tool (bare `peat WORD` may read it otherwise).
    pub(crate) reading: Option<&'static str>,
}

impl Read {
    fn new(verb: &str, list: &'static str) -> Read {
        Read {
            flags: vec![verb.to_string()],
            words: Vec::new(),
            list,
            reading: None,
        }
    }

    /// `name=value` (one word: a value that starts with `-` is still the value).
    fn flag(mut self, name: &str, value: Option<impl ToString>) -> Read {
        if let Some(v) = value {
            self.flags.push(format!("{name}={}", v.to_string()));
        }
        self
    }

    fn switch(mut self, name: &str, on: bool) -> Read {
        if on {
            self.flags.push(name.to_string());
        }
        self
    }

    fn word(mut self, word: Option<impl ToString>) -> Read {
        self.words.extend(word.map(|w| w.to_string()));
        self
    }

    fn scoped(self, scope: Scope) -> Read {
        self.flag("--project", scope.project)
            .switch("--all-projects", scope.all_projects)
            .flag("--agent", scope.agent)
    }

    /// The command line: `json` for the structured answer, else the text one.
    pub(crate) fn argv(&self, json: bool) -> Vec<String> {
        let mut argv = self.flags.clone();
        if json {
            argv.push("--json".into());
        }
        argv.push("--".into());
        argv.extend(self.words.iter().cloned());
        argv
    }
}

/// A tool's arguments, and the read they ask for.
trait Args: DeserializeOwned + JsonSchema + 'static {
    fn read(self) -> Result<Read, String>;
}

fn tool<A: Args>(name: &'static str, title: &'static str, description: &'static str) -> Tool {
    let mut schema = (*rmcp::handler::server::tool::schema_for_type::<A>()).clone();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert(
            CURSOR.into(),
            serde_json::json!({
                "type": "string",
                "description": "Leave out for the first page. When an answer is cut, it ends with a `next_cursor`: pass it here, with the same other arguments, for the next page."
            }),
        );
    }
    Tool {
        name,
        title,
        description,
        schema: Arc::new(schema),
        parse: |args| {
            let a: A = serde_json::from_value(Value::Object(args)).map_err(|e| e.to_string())?;
            a.read()
        },
    }
}

impl Tool {
    /// The read `args` ask for (the cursor taken out), or a sentence saying what is wrong.
    pub(crate) fn read(&self, args: Map<String, Value>) -> Result<Read, String> {
        let known: Vec<&String> = self
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        if let Some(unknown) = args.keys().find(|k| !known.contains(k)) {
            let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "`{}` takes no argument `{unknown}`; it takes: {}",
                self.name,
                names.join(", ")
            ));
        }
        let mut args = args;
        args.remove(CURSOR);
        (self.parse)(args)
            .map_err(|e| format!("the arguments to `{}` are not valid: {e}", self.name))
    }
}

/// Which sessions a read answers from (a user-level ledger holds every project's).
#[derive(Deserialize, JsonSchema, Default)]
struct Scope {
    /// Only the sessions of this project: a repository's path (its worktrees count as it).
    /// Leave out for the project peat was started in (or the whole ledger, when it is a
    /// project's own).
    project: Option<String>,
    /// true: every project's sessions, not only the current one's.
    #[serde(default)]
    all_projects: bool,
    /// Only the sessions this agent ran: claude, codex, gemini, opencode, cursor, copilot, pi,
    /// qwen, droid.
    agent: Option<String>,
}

/// Search what agents and people said, did and concluded.
#[derive(Deserialize, JsonSchema)]
struct Search {
    /// What to look for, in words (matched by keyword and by meaning, the two fused).
    query: String,
    /// Only texts of this kind: user (prompts), said (the agent's prose), final (closing
    /// messages), tool (tool calls), output (tool output), compact (compaction summaries),
    /// obs (observations).
    kind: Option<String>,
    /// Only texts since: days (3), a duration (12h, 2w), a date (2026-11-01), or a day such as
    /// yesterday, monday, "last week".
    since: Option<String>,
    /// Only this session: an id or a unique prefix of one.
    session: Option<String>,
    /// Only observations about this subject (its exact name).
    subject: Option<String>,
    /// How many hits in all [default: 12]; raise it to see more.
    limit: Option<usize>,
    /// true: words only (the keyword lane), without the embedding model.
    #[serde(default)]
    keyword_only: bool,
    /// true: meaning only (the semantic lane; needs the model).
    #[serde(default)]
    semantic_only: bool,
    /// Drop semantic hits below this cosine similarity (0 keeps every one).
    floor: Option<f32>,
    #[serde(flatten)]
    scope: Scope,
}

impl Args for Search {
    fn read(self) -> Result<Read, String> {
        if self.query.trim().is_empty() {
            return Err("`query` is empty: say what to look for".into());
        }
        Ok(Read::new("recall", "/hits")
            .flag("--kind", self.kind)
            .flag("--since", self.since)
            .flag("--session", self.session)
            .flag("--subject", self.subject)
            .flag("--limit", self.limit)
            .switch("--keyword-only", self.keyword_only)
            .switch("--semantic-only", self.semantic_only)
            .flag("--floor", self.floor)
            .scoped(self.scope)
            .word(Some(self.query)))
    }
}

/// One session's summary, or one of its events whole.
#[derive(Deserialize, JsonSchema)]
struct Show {
    /// A session id or a unique prefix of one (a subagent: PARENT/AGENT). Leave out for the
    /// latest session.
    session: Option<String>,
    /// One event of the session, by its seq (the number every answer's `seq` gives): the
    /// event whole.
    seq: Option<u64>,
}

impl Args for Show {
    fn read(self) -> Result<Read, String> {
        if self.seq.is_some() && self.session.is_none() {
            return Err("`seq` needs `session`: name the session the event is in".into());
        }
        Ok(Read::new("show", "/prompts_list")
            .word(self.session)
            .word(self.seq))
    }
}

/// What a session did, step by step.
#[derive(Deserialize, JsonSchema)]
struct Log {
    /// A session id or a unique prefix of one.
    session: String,
}

impl Args for Log {
    fn read(self) -> Result<Read, String> {
        Ok(Read::new("log", "/entries").word(Some(self.session)))
    }
}

/// Which session and prompt wrote each line of a file.
#[derive(Deserialize, JsonSchema)]
struct Blame {
    /// The file: a path (relative to the project, or absolute), or FILE:LINE for one line.
    file: String,
    /// Only lines A to B (1-based, inclusive), as "A,B", or "A" for one line.
    lines: Option<String>,
    /// The file as it stood at a past moment: a day (YYYY-MM-DD: its end), an instant
    /// (2026-08-10T19:18:11Z), a session (after its last event) or SESSION:SEQ.
    at: Option<String>,
}

impl Args for Blame {
    fn read(self) -> Result<Read, String> {
        // FILE:LINE, as bare `peat FILE:LINE` reads it.
        let (file, line) = match self.file.rsplit_once(':') {
            Some((f, l)) if !f.is_empty() && l.parse::<u32>().is_ok() => {
                (f.to_string(), Some(l.to_string()))
            }
            _ => (self.file, None),
        };
        if line.is_some() && self.lines.is_some() {
            return Err("both FILE:LINE and `lines`: give one of them".into());
        }
        Ok(Read::new("blame", "/lines")
            .flag("-L", self.lines.or(line))
            .flag("--at", self.at)
            .word(Some(file)))
    }
}

/// Every recorded edit of a file or directory.
#[derive(Deserialize, JsonSchema)]
struct File {
    /// The file or directory (it need not exist any more).
    path: String,
    #[serde(flatten)]
    scope: Scope,
}

impl Args for File {
    fn read(self) -> Result<Read, String> {
        Ok(Read::new("file", "/touches")
            .scoped(self.scope)
            .word(Some(self.path)))
    }
}

/// The session that made a commit.
#[derive(Deserialize, JsonSchema)]
struct Commit {
    /// A commit hash (a prefix of 4 or more hex digits) or a jj change id.
    rev: String,
}

impl Args for Commit {
    fn read(self) -> Result<Read, String> {
        if self.rev.len() < 4 || !self.rev.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!(
                "{:?} is not a commit: give its hash (4 or more hex digits) or a jj change id",
                self.rev
            ));
        }
        Ok(Read {
            flags: Vec::new(),
            words: vec![self.rev],
            list: "/result/sessions",
            reading: Some("commit"),
        })
    }
}

/// The record as it stood at the end of a past day.
#[derive(Deserialize, JsonSchema)]
struct Asof {
    /// The day (local time): YYYY-MM-DD, today, yesterday, 3d, 2w, 1m, "3 days ago",
    /// "last week", or a weekday (monday: the latest one before today).
    day: String,
    /// Words to search for, in the record as it stood then. Leave out for a summary of the
    /// record then.
    query: Option<String>,
    /// How many hits [default: 12].
    limit: Option<usize>,
}

impl Args for Asof {
    fn read(self) -> Result<Read, String> {
        Ok(Read::new("asof", "/hits")
            .flag("--limit", self.limit)
            .word(Some(self.day))
            .word(self.query))
    }
}

/// The sessions recorded, newest first.
#[derive(Deserialize, JsonSchema)]
struct Sessions {
    #[serde(flatten)]
    scope: Scope,
}

impl Args for Sessions {
    fn read(self) -> Result<Read, String> {
        Ok(Read::new("sessions", "").scoped(self.scope))
    }
}

/// Recent work at a glance.
#[derive(Deserialize, JsonSchema)]
struct Brief {
    /// How many further-back periods to show [default: 8].
    budget: Option<usize>,
    #[serde(flatten)]
    scope: Scope,
}

impl Args for Brief {
    fn read(self) -> Result<Read, String> {
        Ok(Read::new("brief", "/days")
            .flag("--budget", self.budget)
            .scoped(self.scope))
    }
}

/// What has been concluded, by subject.
#[derive(Deserialize, JsonSchema)]
struct Subjects {
    /// One subject's full evidence trail (its exact name). Leave out to list every subject.
    name: Option<String>,
    #[serde(flatten)]
    scope: Scope,
}

impl Args for Subjects {
    fn read(self) -> Result<Read, String> {
        let list = if self.name.is_some() { "/evidence" } else { "" };
        Ok(Read::new("subjects", list)
            .scoped(self.scope)
            .word(self.name))
    }
}

/// Every tool, in the order they are listed.
pub(crate) fn all() -> Vec<Tool> {
    vec![
        tool::<Search>(
            "search",
            "Search the record",
            "Search everything recorded from coding agents' sessions (prompts, the agents' prose, tool calls and output, closing messages, observations) by keyword and by meaning. Each hit gives its session and seq: pass them to `show` for the event whole, or the session to `log` for what happened around it. Narrow with kind, since, session, subject; raise limit for more hits.",
        ),
        tool::<Show>(
            "show",
            "Show a session or an event",
            "A session's summary (where and when it ran, its prompts, files, commits, closing message), or with seq one event whole (a prompt, a tool call with its output, an edit's diff). Session ids may be given by a unique prefix.",
        ),
        tool::<Log>(
            "log",
            "What a session did",
            "A session step by step: each prompt, the tool calls it led to, the files edited (lines added and removed), commits, closing messages; subagents nested where they were started. Each step has a seq: `show` with it gives the step whole.",
        ),
        tool::<Blame>(
            "blame",
            "Who wrote these lines",
            "For each line of a file (or FILE:LINE, or the lines asked for), the agent session, prompt and edit that last wrote it, or that a person or a commit did. With at, the file as it stood at a past moment.",
        ),
        tool::<File>(
            "file",
            "A file's recorded edits",
            "Every recorded edit of a file or of the files under a directory, newest first, each with its session, the prompt that led to it and its seq (for `show`).",
        ),
        tool::<Commit>(
            "commit",
            "The session behind a commit",
            "The agent session(s) that made a commit, with how they were tied to it (a Peat-Session trailer, the recorded commit command, the workspace, or the recorded edits that wrote its lines) and the prompt behind it.",
        ),
        tool::<Asof>(
            "asof",
            "The record at a past day",
            "The record as it stood at the end of a past day: a summary, or with query a search of only what was recorded by then.",
        ),
        tool::<Sessions>(
            "sessions",
            "List sessions",
            "The recorded sessions, newest first: id, agent, where and when it ran, how much work, the first prompt and the closing message, the commits made. Pass an id to `log` or `show` for more.",
        ),
        tool::<Brief>(
            "brief",
            "Recent work",
            "Recent work at a glance: the sessions still active, the last days' activity, further-back periods, the files most worked on, the latest closing message and the subjects concluded. A good first call.",
        ),
        tool::<Subjects>(
            "subjects",
            "Observations by subject",
            "What sessions concluded, grouped by subject (observations recorded with `peat obs`): every subject with its current claim, or with name one subject's full evidence trail.",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(tool: &str, args: Value) -> Result<Read, String> {
        let t = all().into_iter().find(|t| t.name == tool).unwrap();
        t.read(args.as_object().unwrap().clone())
    }

    #[test]
    fn blame_reads_file_colon_line_as_one_line() {
        let r = read("blame", json!({"file": "src/a.rs:42", "at": "2026-07-01"})).unwrap();
        assert_eq!(
            r.argv(true),
            [
                "blame",
                "-L=42",
                "--at=2026-07-01",
                "--json",
                "--",
                "src/a.rs"
            ]
        );
    }

    #[test]
    fn words_that_look_like_flags_stay_words() {
        let r = read("search", json!({"query": "--all-projects", "limit": 3})).unwrap();
        assert_eq!(
            r.argv(false),
            ["recall", "--limit=3", "--", "--all-projects"]
        );
    }

    #[test]
    fn an_unknown_or_mistyped_argument_is_a_sentence_naming_it() {
        let e = read("log", json!({"sesion": "3f6c"})).unwrap_err();
        assert!(
            e.starts_with("`log` takes no argument `sesion`; it takes: "),
            "{e}"
        );
        assert!(e.contains("session"), "{e}");
        let e = read("show", json!({"session": "3f6c", "seq": "two"})).unwrap_err();
        assert!(
            e.starts_with("the arguments to `show` are not valid: "),
            "{e}"
        );
        assert!(read("commit", json!({"rev": "HEAD~1"})).is_err());
        assert!(read("search", json!({"query": " "})).is_err());
    }

    #[test]
    fn every_tool_takes_a_cursor_and_describes_every_argument() {
        for t in all() {
            let props = t.schema["properties"].as_object().unwrap();
            assert!(props.contains_key(CURSOR), "{}", t.name);
            for (name, p) in props {
                assert!(
                    p.get("description").is_some(),
                    "{}.{name} has no description",
                    t.name
                );
            }
        }
    }
}
