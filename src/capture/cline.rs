//! Cline tasks (the VS Code extension's
//! `<globalStorage>/saoudrizwan.claude-dev/tasks/<task id>/api_conversation_history.json`,
//! the CLI's `~/.cline/data/tasks/<task id>/` (`$CLINE_DATA_DIR`, `$CLINE_DIR/data`)): one
//! JSON array of messages in the Anthropic format, written whole each time the task
//! goes on. Read as a document (see `source`): message `i` is at position `i + 1`.
//!
//! Follows Cline 3.89 (`src/core/storage/disk.ts`, `src/shared/messages/content.ts`'s
//! `ClineStorageMessage`: `{role, content, id?, ts?, modelInfo?, metrics?}`, whose
//! `modelInfo` `{modelId, providerId, mode}` its edits record as `provider/model`; the tool
//! names of `src/shared/tools.ts`; `ToolResultUtils` and `prompts/responses.ts` for how
//! results are worded). With native tool calling, an assistant message holds `tool_use`
//! blocks and the next user message their `tool_result`s, each `<tool description>
//! Result:\n<text>`; a failure reads `The tool execution failed with the following error:`
//! or `The user denied this operation.`, a command's `Command failed with exit code N.` The person's
//! words are wrapped: `<task>` (the first), `<feedback>`, `<answer>`, `<user_message>`; the
//! first message's `<environment_details>` names the cwd (`# Current Working Directory (…)
//! Files`). `attempt_completion`'s `result` is the turn's closing message;
//! `summarize_task` (and `condense`) leave the summary the context was compacted to.
//!
//! Tool calls a model without native tool calling writes as XML in its text
//! (`<write_to_file><path>…</path><content>…</content></write_to_file>`, Cline's only form
//! before native tool calling) are read as calls too, `parse-assistant-message.ts`'s way;
//! their results come back as texts `[<tool> for '…'] Result:`, in order. Not read:
//! `ui_messages.json` (the panel's copy of the same task). Not in the format: the branch, the harness version. The task id is the folder's
//! name, a creation time in milliseconds, which dates a message without its own `ts`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chat::{Call, Chat, ChatFormat, Line, text_of};
use super::{Emit, FileHints, META_SLOT, absolute, blocks, model_name, str_at};
use crate::vocab::change::Change;
use crate::vocab::event::{Agent, Event, Seq, SessionId, TouchOp};

/// The file a task's conversation is kept in.
pub(crate) const HISTORY_FILE: &str = "api_conversation_history.json";

/// The tags Cline wraps what the person typed in.
const PERSON_TAGS: &[&str] = &["task", "feedback", "answer", "user_message"];

/// What a failed tool's result starts its text with, after its description.
const FAILURES: &[&str] = &[
    "The tool execution failed with the following error:",
    "The user denied this operation.",
    "Command failed with exit code",
    "Command terminated by signal",
];

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Cline {
    session: Option<SessionId>,
    cwd: Option<String>,
    meta_done: bool,
    /// The previous message's time (at first, the task's creation).
    ts: i64,
    /// The model of the message being read (`modelInfo`), for the calls it makes.
    #[serde(skip)]
    model: Option<String>,
    chat: Chat,
    /// Tool calls written as XML in the text, by the id given them here, oldest first:
    /// their results come back in order, each a text naming the tool.
    xml_pending: Vec<String>,
    xml_calls: u64,
}

impl Cline {
    pub(crate) fn new(hints: &FileHints) -> Cline {
        let task = hints
            .path
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty());
        Cline {
            ts: task.as_deref().and_then(|t| t.parse().ok()).unwrap_or(0),
            session: task.map(SessionId),
            ..Cline::default()
        }
    }

    fn user(&mut self, content: Option<&Value>, cx: &mut Line, out: &mut Emit) {
        if let Some(Value::String(text)) = content {
            self.user_text(text, cx, out);
            return;
        }
        for block in content.and_then(Value::as_array).into_iter().flatten() {
            match str_at(block, "type") {
                Some("text") => {
                    let text = str_at(block, "text").unwrap_or("");
                    self.xml_result(text, cx, out);
                    self.user_text(text, cx, out);
                }
                Some("tool_result") => {
                    let printed = text_of(block.get("content"));
                    if let Some(id) = str_at(block, "tool_use_id") {
                        let result = result_text(&printed);
                        let failed = FAILURES.iter().any(|f| result.starts_with(f));
                        self.chat.result(id, failed, result, cx, out);
                    }
                    // An answer to a question, or feedback on a refused call, is the
                    // person speaking.
                    self.user_text(&printed, cx, out);
                }
                _ => {}
            }
        }
    }

    /// A text that is the result of the oldest call written as XML: `[<tool> for '…']
    /// Result:` and what it gave.
    fn xml_result(&mut self, text: &str, cx: &mut Line, out: &mut Emit) {
        let first = text.lines().next().unwrap_or("");
        if self.xml_pending.is_empty() || !first.starts_with('[') || !first.ends_with("] Result:") {
            return;
        }
        let id = self.xml_pending.remove(0);
        let result = result_text(text);
        let failed = FAILURES.iter().any(|f| result.starts_with(f));
        self.chat.result(&id, failed, result, cx, out);
    }

    /// A user text block: the person's words where Cline wrapped them, the cwd where the
    /// environment details name it; the rest is the harness's.
    fn user_text(&mut self, text: &str, cx: &mut Line, out: &mut Emit) {
        if self.cwd.is_none()
            && let Some(cwd) = between(text, "# Current Working Directory (", ") Files")
            && !cwd.starts_with("Primary: ")
        {
            self.cwd = Some(cwd.to_string());
        }
        for tag in PERSON_TAGS {
            if let Some(said) = between(text, &format!("<{tag}>\n"), &format!("\n</{tag}>")) {
                self.chat.prompt(said, false, None, cx, out);
            }
        }
    }

    fn assistant(&mut self, content: Option<&Value>, cx: &mut Line, out: &mut Emit) {
        if let Some(Value::String(text)) = content {
            self.assistant_text(text, cx, out);
            return;
        }
        for block in content.and_then(Value::as_array).into_iter().flatten() {
            match str_at(block, "type") {
                Some("text") => self.assistant_text(str_at(block, "text").unwrap_or(""), cx, out),
                Some("tool_use") => self.tool_use(block, cx, out),
                _ => {}
            }
        }
    }

    /// The agent's text: its prose, and the tool calls it wrote as XML (for a model
    /// without native tool calling), each a `tool_use` of its own.
    fn assistant_text(&mut self, text: &str, cx: &mut Line, out: &mut Emit) {
        let (prose, uses) = xml_tool_uses(text);
        self.chat.said(&prose, true, cx, out);
        for (name, input) in uses {
            self.xml_calls += 1;
            let id = format!("xml-{}", self.xml_calls);
            self.xml_pending.push(id.clone());
            let block =
                serde_json::json!({"type": "tool_use", "id": id, "name": name, "input": input});
            self.tool_use(&block, cx, out);
        }
    }

    fn tool_use(&mut self, block: &Value, cx: &mut Line, out: &mut Emit) {
        let name = str_at(block, "name").unwrap_or("unknown");
        let input = block.get("input").unwrap_or(&Value::Null);
        let field = |key: &str| str_at(input, key).unwrap_or("");
        match name {
            // What the agent says to the person, as a tool: its prose.
            "attempt_completion" => return self.chat.said(field("result"), true, cx, out),
            "plan_mode_respond" => return self.chat.said(field("response"), true, cx, out),
            "ask_followup_question" => return self.chat.said(field("question"), true, cx, out),
            "summarize_task" | "condense" => {
                return self.chat.compaction(Some(field("context")), cx, out);
            }
            _ => {}
        }
        let path = str_at(input, "path").map(|p| absolute(p, self.cwd.as_deref()));
        let mut edits = Vec::new();
        if let Some(path) = &path {
            match name {
                "write_to_file" => {
                    let change = Change::write(field("content"));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                "replace_in_file" => {
                    let mut replaced: Vec<_> = blocks::edit_blocks(field("diff"))
                        .into_iter()
                        .map(|b| b.edit)
                        .collect();
                    let change = match replaced.len() {
                        0 => None,
                        1 => replaced.pop().map(Change::Edit),
                        _ => Some(Change::MultiEdit { edits: replaced }),
                    };
                    edits.extend(change.map(|c| (path.clone(), TouchOp::Edit, c)));
                }
                _ => {}
            }
        }
        let command = (name == "execute_command").then(|| field("command").to_string());
        let detail = match name {
            "search_files" => format!("{} in {}", field("regex"), path.clone().unwrap_or_default()),
            "use_mcp_tool" => format!("{}/{}", field("server_name"), field("tool_name")),
            "browser_action" => [field("action"), field("url")].join(" ").trim().to_string(),
            _ => path
                .clone()
                .or_else(|| command.clone())
                .unwrap_or_else(|| field("url").to_string()),
        };
        let call = Call {
            id: str_at(block, "id").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command,
            echoes: matches!(name, "read_file" | "write_to_file" | "replace_in_file"),
            model: self.model.clone(),
        };
        self.chat.call(call, cx, out);
    }
}

impl ChatFormat for Cline {
    fn read(&mut self, position: u64, v: &Value, out: &mut Emit) {
        let Some(role) = str_at(v, "role") else {
            return;
        };
        if let Some(ts) = v.get("ts").and_then(Value::as_i64) {
            self.ts = ts;
        }
        self.chat.saw(self.ts);
        let mut cx = Line::new(position, self.ts);
        let info = v.get("modelInfo");
        self.model = info.and_then(|i| model_name(str_at(i, "providerId"), str_at(i, "modelId")));
        match role {
            "user" => self.user(v.get("content"), &mut cx, out),
            "assistant" => self.assistant(v.get("content"), &mut cx, out),
            _ => {}
        }
        if !self.meta_done && role == "user" {
            // After the first message: its environment details name the cwd.
            self.meta_done = true;
            let meta = Event::SessionMeta {
                cwd: self.cwd.clone().unwrap_or_default(),
                branch: None,
                agent: Some(Agent::Cline),
                version: None,
                parent: None,
                subagent: None,
            };
            out.event(Seq::at_line(position, META_SLOT), self.ts, meta);
        }
    }

    fn chat(&self) -> &Chat {
        &self.chat
    }

    fn session_id(&self) -> Option<SessionId> {
        self.session.clone()
    }
}

/// Whether `doc`, read from a file named `name`, is a Cline task's conversation: that
/// file's name, and an array of messages each with a `role` of the Anthropic format.
pub(crate) fn is_history(name: &str, doc: &Value) -> bool {
    name == HISTORY_FILE
        && doc.as_array().is_some_and(|messages| {
            !messages.is_empty()
                && messages.iter().all(|m| {
                    matches!(str_at(m, "role"), Some("user" | "assistant"))
                        && m.get("content").is_some()
                })
        })
}

/// The tools Cline's models may call by writing XML (`<write_to_file><path>…</path>…`).
const XML_TOOLS: &[&str] = &[
    "write_to_file",
    "replace_in_file",
    "execute_command",
    "read_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
    "new_task",
    "web_fetch",
    "condense",
    "summarize_task",
    "new_rule",
];

/// A tool call written as XML: the tool's name and its parameters.
type XmlUse = (String, serde_json::Map<String, Value>);

/// The prose of an agent's text and the tool calls written in it as XML, each its name and
/// its parameters, trimmed as Cline's `parseAssistantMessage` trims them (a `content` runs
/// to its last closing tag, for a file that holds the tag itself).
fn xml_tool_uses(text: &str) -> (String, Vec<XmlUse>) {
    let mut prose = String::new();
    let mut uses = Vec::new();
    let mut rest = text;
    loop {
        let next = XML_TOOLS
            .iter()
            .filter_map(|tool| rest.find(&format!("<{tool}>")).map(|at| (at, *tool)))
            .min();
        let Some((at, tool)) = next else { break };
        let close = format!("</{tool}>");
        let body_at = at + tool.len() + 2;
        let Some(len) = rest[body_at..].find(&close) else {
            break;
        };
        prose.push_str(&rest[..at]);
        let body = &rest[body_at..body_at + len];
        let mut input = serde_json::Map::new();
        let mut params = body;
        while let Some(open) = params.find('<') {
            let after = &params[open + 1..];
            let Some(end) = after.find('>') else { break };
            let name = &after[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                params = after;
                continue;
            }
            let value = &after[end + 1..];
            let closing = format!("</{name}>");
            let found = if name == "content" {
                value.rfind(&closing)
            } else {
                value.find(&closing)
            };
            let Some(stop) = found else { break };
            input.insert(
                name.to_string(),
                Value::String(value[..stop].trim().to_string()),
            );
            params = &value[stop + closing.len()..];
        }
        uses.push((tool.to_string(), input));
        rest = &rest[body_at + len + close.len()..];
    }
    prose.push_str(rest);
    (prose.trim().to_string(), uses)
}

/// What a tool's result says after its description (`[read_file for 'a.rs'] Result:`).
fn result_text(text: &str) -> &str {
    let first = text.lines().next().unwrap_or("");
    match first
        .strip_suffix("Result:")
        .filter(|_| first.starts_with('['))
    {
        Some(_) => text[first.len()..].trim_start_matches('\n'),
        None => text,
    }
}

/// The text between the first `open` in `text` and the `close` after it.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::TranscriptParser;
    use serde_json::json;

    fn feed(messages: &[Value]) -> Vec<(Seq, Event)> {
        let mut p = Cline::new(&FileHints {
            path: "/g/tasks/1784019600000/api_conversation_history.json".into(),
            ..FileHints::default()
        });
        let mut out = Emit::default();
        for (i, m) in messages.iter().enumerate() {
            p.line(i as u64 + 1, m, &mut out);
        }
        p.flush(&mut out);
        assert_eq!(p.session().unwrap().as_str(), "1784019600000");
        out.events.into_iter().map(|(s, (_, e))| (s, e)).collect()
    }

    fn task() -> Value {
        json!({"role": "user", "content": [
            {"type": "text", "text": "<task>\nfix the build\n</task>"},
            {"type": "text", "text": "<environment_details>\n# Current Working Directory (/w/app) Files\nsrc/\n</environment_details>"}
        ]})
    }

    #[test]
    fn the_task_is_the_prompt_and_its_environment_names_the_cwd() {
        let events = feed(&[task()]);
        assert!(matches!(
            &events[0].1,
            Event::SessionMeta { cwd, agent: Some(Agent::Cline), .. } if cwd == "/w/app"
        ));
        assert!(matches!(&events[1].1, Event::UserMsg { text, .. } if text == "fix the build"));
        assert_eq!(events.len(), 2, "the environment details are not a prompt");
    }

    #[test]
    fn a_replace_in_file_is_an_edit_by_its_messages_model_and_a_failed_command_is_marked() {
        let diff = "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n------- SEARCH\nc\n=======\nd\n+++++++ REPLACE\n";
        let events = feed(&[
            task(),
            json!({"role": "assistant", "modelInfo": {"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"}, "content": [
                {"type": "tool_use", "id": "t1", "name": "replace_in_file", "input": {"path": "src/x.rs", "diff": diff}},
                {"type": "tool_use", "id": "t2", "name": "execute_command", "input": {"command": "cargo test", "requires_approval": false}}
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "[replace_in_file for 'src/x.rs'] Result:\nThe content was successfully saved."},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "[execute_command for 'cargo test'] Result:\nCommand failed with exit code 101.\nOutput:\nerror[E0425]"}]}
            ]}),
        ]);
        let touch = events
            .iter()
            .find_map(|(_, e)| match e {
                Event::FileTouch {
                    path, op, model, ..
                } => Some((path.clone(), *op, model.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            touch,
            (
                "/w/app/src/x.rs".to_string(),
                TouchOp::Edit,
                Some("anthropic/claude-sonnet-4-5".to_string())
            )
        );
        let calls: Vec<(&str, bool)> = events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::ToolCall { tool, ok, .. } => Some((tool.as_str(), *ok)),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [("replace_in_file", true), ("execute_command", false)]
        );
        // The edit's echo is not kept; the failure's output is, without its description.
        let outputs: Vec<&str> = events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::ToolOutput { excerpt, .. } => Some(excerpt.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            outputs,
            ["Command failed with exit code 101.\nOutput:\nerror[E0425]"]
        );
    }

    #[test]
    fn the_completion_closes_the_turn_when_the_person_gives_feedback() {
        let events = feed(&[
            task(),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t9", "name": "attempt_completion", "input": {"result": "The build passes."}}
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t9", "content": "[attempt_completion] Result:\nThe user has provided feedback on the results."},
                {"type": "text", "text": "<feedback>\nalso add a test\n</feedback>"}
            ]}),
        ]);
        let kinds: Vec<String> = events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::FinalMsg { text } => Some(format!("final {text}")),
                Event::UserMsg { text, .. } => Some(format!("user {text}")),
                Event::Said { text } => Some(format!("said {text}")),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "user fix the build",
                "said Looking.",
                "final The build passes.",
                "user also add a test"
            ]
        );
    }

    #[test]
    fn tool_calls_written_as_xml_are_calls_and_their_results_come_back_in_order() {
        let text = "I'll write it.\n\n<write_to_file>\n<path>src/a.rs</path>\n<content>\nfn a() {}\n</content>\n</write_to_file>\n\n<execute_command>\n<command>cargo test</command>\n<requires_approval>false</requires_approval>\n</execute_command>";
        let events = feed(&[
            task(),
            json!({"role": "assistant", "content": [{"type": "text", "text": text}]}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "[write_to_file for 'src/a.rs'] Result:\nThe content was successfully saved to src/a.rs."},
                {"type": "text", "text": "[execute_command for 'cargo test'] Result:\nCommand failed with exit code 1.\nOutput:\nno tests"}
            ]}),
        ]);
        assert!(
            events
                .iter()
                .any(|(_, e)| matches!(e, Event::FinalMsg { text } if text == "I'll write it."))
        );
        let touch = events.iter().find_map(|(_, e)| match e {
            Event::FileTouch {
                path,
                op: TouchOp::Write,
                ..
            } => Some(path.as_str()),
            _ => None,
        });
        assert_eq!(touch, Some("/w/app/src/a.rs"));
        let calls: Vec<(&str, bool, &str)> = events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::ToolCall {
                    tool, ok, detail, ..
                } => Some((tool.as_str(), *ok, detail.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("write_to_file", true, "/w/app/src/a.rs"),
                ("execute_command", false, "cargo test")
            ]
        );
    }

    #[test]
    fn only_a_task_file_of_messages_is_a_cline_history() {
        let doc = json!([{"role": "user", "content": "hi"}]);
        assert!(is_history(HISTORY_FILE, &doc));
        assert!(!is_history("ui_messages.json", &doc));
        assert!(!is_history(HISTORY_FILE, &json!([])));
        assert!(!is_history(
            HISTORY_FILE,
            &json!([{"ts": 1, "type": "say"}])
        ));
        assert!(!is_history(HISTORY_FILE, &json!({"messages": []})));
    }
}
