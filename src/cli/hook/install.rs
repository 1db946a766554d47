//! `peat hook install`: wire `peat hook` into a harness's project configuration and lay the
//! skill where the harness discovers it.
//!
//! The configuration file belongs to the user and to other tools: the merge keeps every key
//! and every other tool's hook, replaces older peat entries (earlier binary paths, the
//! pre-0.4 shell snippets, events peat no longer uses), and changes nothing when the file is
//! already current. A file that is not valid JSON is refused and left untouched.

use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};

use super::EVENTS;

/// The skill, as `peat skill` prints it and install lays it.
pub(crate) const SKILL: &str = include_str!("../../../skills/peat/SKILL.md");

/// Which harness configuration to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Harness {
    /// `.claude/settings.json`, or with `local` the uncommitted `.claude/settings.local.json`.
    Claude { local: bool },
    /// `.codex/hooks.json`.
    Codex,
    /// One of the harnesses of [`OTHERS`], each wired from its row.
    Other(&'static Other),
    /// OpenCode, which runs plugins rather than hooks: peat's is a file of its own.
    OpenCode,
    /// Cline, which runs an executable file named for each hook: peat's are files of its
    /// own (see [`cline_script`]).
    Cline,
}

/// OpenCode's plugin folder below a project's root; at user level `plugins/` in its config
/// folder (`~/.config/opencode`), where it discovers `skills/` too.
const OPENCODE_PLUGIN: &str = ".opencode/plugins/peat.js";
const OPENCODE_CONFIG: &str = ".config/opencode";

/// OpenCode's plugin: OpenCode fires no command hooks, so when a session goes idle (the end
/// of a turn) or is compacted it runs `peat hook` with no payload, whose capture is the
/// sweep of the known roots, OpenCode's database among them. Spawned with its stdio closed
/// and never awaited: the hook returns at once and never holds the session.
fn opencode_plugin(hook: &HookCommand) -> String {
    let line = serde_json::to_string(&hook.line(" --agent opencode --event Stop"))
        .unwrap_or_else(|_| "\"peat hook --event Stop\"".into());
    format!(
        "// peat: record OpenCode's sessions. OpenCode runs plugins, not command hooks: when a\n\
         // session goes idle or is compacted, this runs `peat hook`, whose capture sweeps\n\
         // OpenCode's database into peat's ledger. Written by `peat hook install --agent\n\
         // opencode`, which rewrites it whole.\n\
         export const Peat = async () => ({{\n  \
           event: async ({{ event }}) => {{\n    \
             if (event.type === \"session.idle\" || event.type === \"session.compacted\") {{\n      \
               Bun.spawn([\"sh\", \"-c\", {line}], {{ stdin: \"ignore\", stdout: \"ignore\", stderr: \"ignore\" }});\n    \
             }}\n  \
           }},\n\
         }});\n"
    )
}

/// Cline's hooks below a project's root (`.clinerules/hooks/`) and, for every project,
/// below the home folder (`~/Documents/Cline/Hooks/`, the extension's and the CLI's global
/// hooks); its skills in `.cline/skills/` and `~/.cline/skills/`.
const CLINE_HOOKS: &str = ".clinerules/hooks";
const CLINE_USER_HOOKS: &str = "Documents/Cline/Hooks";
const CLINE_SKILLS: &str = ".cline/skills";

/// The Cline hooks peat runs on, each an executable file of that name (Cline 3.36 and
/// later, `src/core/hooks/hook-factory.ts`; docs.cline.bot's hook reference): a task's start
/// and resumption, its completion, compaction and its cancellation.
const CLINE_EVENTS: [&str; 5] = [
    "TaskStart",
    "TaskResume",
    "TaskComplete",
    "PreCompact",
    "TaskCancel",
];

/// peat's Cline hook, the same file under each hook's name: Cline runs it through a shell,
/// with the task's JSON on stdin (`hookName`, `taskId`, `workspaceRoots`), and reads its
/// stdout as a JSON answer, which `peat hook --agent cline` gives on every path. Cline runs
/// its hooks in its own folder (the editor's, for the extension), so a project's script
/// first goes to the project it is installed in, to find its ledger. The transcript is the
/// task's `api_conversation_history.json`, found by the task's id.
fn cline_script(hook: &HookCommand) -> String {
    format!(
        "#!/bin/sh\n\
         # peat: record Cline's tasks. Written by `peat hook install --agent cline`, which\n\
         # rewrites it whole; the same file is installed under each hook's name.\n\
         case \"$0\" in */.clinerules/hooks/*) cd \"${{0%/.clinerules/hooks/*}}\" || exit 0 ;; esac\n\
         {}\n",
        hook.line(" --agent cline")
    )
}

/// How a harness lists the handlers of one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Claude Code's: groups, each with a matcher and `{"hooks": [handler, …]}`.
    Grouped,
    /// Cursor's and Copilot CLI's: the handlers themselves, in a file that says
    /// `"version": 1`.
    Flat,
}

/// The key a handler names its shell command by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommandKey {
    /// `{"type": "command", "command": …}` (Gemini CLI, Qwen Code, droid).
    Typed,
    /// `{"command": …}` (Cursor).
    Bare,
    /// `{"type": "command", "bash": …, "timeoutSec": …}` (Copilot CLI).
    Bash,
}

/// A harness beyond Claude Code and Codex that reads its hooks from a JSON file: where it
/// reads hooks and skills, which of its events are peat's moments, and the shape of its
/// configuration. One row each, so adding a harness is adding a row.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Other {
    /// What `peat hook --agent` and `peat hook install --agent` call it.
    pub(crate) flag: &'static str,
    /// The agent, as a person names it.
    pub(crate) name: &'static str,
    /// Its folder in the home folder: where it is, it is installed.
    pub(crate) dir: &'static str,
    /// Its hook configuration below a project's root.
    pub(crate) config: &'static str,
    /// Its user-level hook configuration, below the home folder (see [`UserLevel::of`]).
    pub(crate) user_config: &'static str,
    /// Where it discovers skills below a project's root.
    pub(crate) skills: &'static str,
    /// Where it discovers skills for every project, below the home folder.
    pub(crate) user_skills: &'static str,
    /// Its names for the moments peat acts on that it fires: SessionStart, the end of a
    /// turn, compaction (where it has one) and the end of a session.
    pub(crate) events: &'static [&'static str],
    pub(crate) shape: Shape,
    pub(crate) command_key: CommandKey,
    /// Whether it reads the event from the payload; Copilot CLI's camelCase payloads do
    /// not say, so its handlers pass `--event`.
    pub(crate) names_event: bool,
}

/// The harnesses beyond Claude Code and Codex that fire hooks, from their own sources and
/// docs: Gemini CLI (google-gemini/gemini-cli, docs/hooks/reference.md: `hooks` in
/// settings.json, JSON on stdout), Qwen Code (QwenLM/qwen-code, packages/core/src/hooks:
/// Claude Code's events and shape), Cursor (`hooks.json`, version 1, camelCase events),
/// Copilot CLI (GitHub's hooks reference: `.github/hooks/*.json` and the user-level
/// `~/.copilot/hooks/*.json`, camelCase events and payloads), Factory droid
/// (docs.factory.ai hooks reference: Claude Code's shape in `.factory/settings.json`), Goose
/// (block/goose 1.x, `crates/goose/src/hooks/mod.rs` and `plugins/discovery.rs`: a
/// plugin's `hooks/hooks.json`, in Claude Code's shape, for every plugin folder below a
/// project's `.agents/plugins/` or `~/.agents/plugins/`; its events `SessionStart`, `Stop`
/// and `SessionEnd`, no compaction; its payload `{event, session_id, working_dir,
/// last_assistant_message, matcher_context}` names no transcript, so its capture is the
/// sweep; skills in `.goose/skills/` and `~/.config/goose/skills/`).
pub(crate) static OTHERS: [Other; 6] = [
    Other {
        flag: "gemini",
        name: "Gemini CLI",
        dir: ".gemini",
        config: ".gemini/settings.json",
        user_config: ".gemini/settings.json",
        skills: ".gemini/skills",
        user_skills: ".gemini/skills",
        events: &["SessionStart", "AfterAgent", "PreCompress", "SessionEnd"],
        shape: Shape::Grouped,
        command_key: CommandKey::Typed,
        names_event: true,
    },
    Other {
        flag: "qwen",
        name: "Qwen Code",
        dir: ".qwen",
        config: ".qwen/settings.json",
        user_config: ".qwen/settings.json",
        skills: ".qwen/skills",
        user_skills: ".qwen/skills",
        events: &["SessionStart", "Stop", "PreCompact", "SessionEnd"],
        shape: Shape::Grouped,
        command_key: CommandKey::Typed,
        names_event: true,
    },
    Other {
        flag: "cursor",
        name: "Cursor",
        dir: ".cursor",
        config: ".cursor/hooks.json",
        user_config: ".cursor/hooks.json",
        skills: ".cursor/skills",
        user_skills: ".cursor/skills",
        events: &["sessionStart", "stop", "preCompact", "sessionEnd"],
        shape: Shape::Flat,
        command_key: CommandKey::Bare,
        names_event: true,
    },
    Other {
        flag: "copilot",
        name: "Copilot CLI",
        dir: ".copilot",
        config: ".github/hooks/peat.json",
        user_config: ".copilot/hooks/peat.json",
        skills: ".github/skills",
        user_skills: ".copilot/skills",
        events: &["sessionStart", "agentStop", "preCompact", "sessionEnd"],
        shape: Shape::Flat,
        command_key: CommandKey::Bash,
        names_event: false,
    },
    Other {
        flag: "droid",
        name: "Factory droid",
        dir: ".factory",
        config: ".factory/settings.json",
        user_config: ".factory/settings.json",
        skills: ".factory/skills",
        user_skills: ".factory/skills",
        events: &["SessionStart", "Stop", "PreCompact", "SessionEnd"],
        shape: Shape::Grouped,
        command_key: CommandKey::Typed,
        names_event: true,
    },
    Other {
        flag: "goose",
        name: "Goose",
        dir: ".config/goose",
        config: ".agents/plugins/peat/hooks/hooks.json",
        user_config: ".agents/plugins/peat/hooks/hooks.json",
        skills: ".goose/skills",
        user_skills: ".config/goose/skills",
        events: &["SessionStart", "Stop", "SessionEnd"],
        shape: Shape::Grouped,
        command_key: CommandKey::Typed,
        names_event: true,
    },
];

impl Harness {
    /// The harness `peat hook install --agent NAME` names.
    pub(crate) fn named(name: &str) -> Option<Harness> {
        match name.trim().to_ascii_lowercase().as_str() {
            "claude" => Some(Harness::Claude { local: false }),
            "codex" => Some(Harness::Codex),
            "opencode" => Some(Harness::OpenCode),
            "cline" => Some(Harness::Cline),
            other => OTHERS.iter().find(|o| o.flag == other).map(Harness::Other),
        }
    }

    pub(crate) fn config_path(self, root: &Path) -> PathBuf {
        match self {
            Harness::Claude { local: false } => root.join(".claude/settings.json"),
            Harness::Claude { local: true } => root.join(".claude/settings.local.json"),
            Harness::Codex => root.join(".codex/hooks.json"),
            Harness::Other(o) => root.join(o.config),
            Harness::OpenCode => root.join(OPENCODE_PLUGIN),
            Harness::Cline => root.join(CLINE_HOOKS),
        }
    }

    pub(crate) fn skill_path(self, root: &Path) -> PathBuf {
        match self {
            Harness::Claude { .. } => root.join(".claude/skills/peat/SKILL.md"),
            Harness::Codex => root.join(".agents/skills/peat/SKILL.md"),
            Harness::Other(o) => root.join(o.skills).join("peat/SKILL.md"),
            Harness::OpenCode => root.join(".opencode/skills/peat/SKILL.md"),
            Harness::Cline => root.join(CLINE_SKILLS).join("peat/SKILL.md"),
        }
    }

    /// The agent, as a person names it.
    pub(crate) fn agent_name(self) -> &'static str {
        match self {
            Harness::Claude { .. } => "Claude Code",
            Harness::Codex => "Codex",
            Harness::Other(o) => o.name,
            Harness::OpenCode => "OpenCode",
            Harness::Cline => "Cline",
        }
    }

    /// The install command for this harness, for messages that say how to fix something.
    pub(crate) fn install_command(self) -> String {
        match self {
            Harness::Claude { local: false } => "peat hook install".into(),
            Harness::Claude { local: true } => "peat hook install --local".into(),
            Harness::Codex => "peat hook install --codex".into(),
            Harness::Other(o) => format!("peat hook install --agent {}", o.flag),
            Harness::OpenCode => "peat hook install --agent opencode".into(),
            Harness::Cline => "peat hook install --agent cline".into(),
        }
    }

    /// The moments peat's hook runs on in this harness, as a person reads them.
    pub(crate) fn moments(self) -> String {
        match self {
            Harness::OpenCode => "session.idle, session.compacted (a plugin)".into(),
            Harness::Cline => format!("{} (a script each)", CLINE_EVENTS.join(", ")),
            _ => self
                .plan(&HookCommand::at(None))
                .events
                .iter()
                .map(|(e, _)| *e)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// peat's handlers in this harness's configuration: each event with its handler, in
    /// the harness's shape, for the command `hook` (none for OpenCode and Cline, whose
    /// plugin and scripts are peat's own files: see [`install_for`]).
    pub(crate) fn plan(self, hook: &HookCommand) -> Plan {
        match self {
            Harness::OpenCode | Harness::Cline => Plan {
                events: Vec::new(),
                shape: Shape::Flat,
            },
            Harness::Claude { .. } | Harness::Codex => {
                let entry = entry(&hook.line(""));
                Plan {
                    events: EVENTS.iter().map(|e| (*e, entry.clone())).collect(),
                    shape: Shape::Grouped,
                }
            }
            Harness::Other(o) => Plan {
                events: o
                    .events
                    .iter()
                    .map(|e| {
                        let mut args = format!(" --agent {}", o.flag);
                        if !o.names_event {
                            args.push_str(&format!(" --event {e}"));
                        }
                        let line = hook.line(&args);
                        let handler = match o.command_key {
                            CommandKey::Typed => entry(&line),
                            CommandKey::Bare => json!({ "command": line }),
                            CommandKey::Bash => {
                                json!({"type": "command", "bash": line, "timeoutSec": 30})
                            }
                        };
                        (*e, handler)
                    })
                    .collect(),
                shape: o.shape,
            },
        }
    }
}

/// peat's hook command for this binary, before the arguments a harness's handlers add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HookCommand {
    /// A stable path to this binary (see [`stable_exe`]); `None`: `peat` on PATH.
    exe: Option<PathBuf>,
}

impl HookCommand {
    pub(crate) fn at(exe: Option<PathBuf>) -> HookCommand {
        HookCommand { exe }
    }

    /// The command for the running binary, from what the context resolved.
    pub(crate) fn of(ctx: &crate::cli::ctx::Ctx) -> HookCommand {
        HookCommand::at(stable_exe(
            &ctx.exe,
            ctx.path_var.as_deref(),
            ctx.home.as_deref(),
            ctx.nix_store_dir.as_deref(),
            ctx.user.as_deref(),
        ))
    }

    /// The shell line, with `args` (each with its leading space) after `hook`.
    pub(crate) fn line(&self, args: &str) -> String {
        match &self.exe {
            Some(p) => hook_command(p, args),
            None => format!("{PLAIN_HOOK_COMMAND}{args}"),
        }
    }
}

/// peat's handlers for one harness: each event with the handler it runs there.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Plan {
    pub(crate) events: Vec<(&'static str, Value)>,
    pub(crate) shape: Shape,
}

impl Plan {
    fn handler(&self, event: &str) -> Option<&Value> {
        self.events
            .iter()
            .find(|(e, _)| *e == event)
            .map(|(_, h)| h)
    }

    /// Whether the handlers listed for one event hold `handler`.
    fn holds(&self, listed: &[Value], handler: &Value) -> bool {
        match self.shape {
            Shape::Flat => listed.contains(handler),
            Shape::Grouped => listed.iter().any(|g| holds(g, handler)),
        }
    }
}

/// The shell command a harness runs: this binary by absolute path, or `peat` on PATH when
/// that path is gone (a teammate's clone of a committed settings file, an upgrade that moved
/// the binary), with `args` after `hook`. Every harness runs hook commands through a shell.
pub(crate) fn hook_command(exe: &Path, args: &str) -> String {
    let q = shell_quote(&exe.to_string_lossy());
    format!("[ -x {q} ] && exec {q} hook{args} || exec peat hook{args}")
}

/// The command when no stable path to this binary is known: `peat` on PATH.
pub(crate) const PLAIN_HOOK_COMMAND: &str = "peat hook";

/// The path a hook command should name for the binary at `exe`: its real path, unless that
/// is inside the Nix store. A store path changes on every upgrade (and garbage collection
/// removes the old one; Codex asks to trust a changed hooks.json again), so on Nix it is a
/// profile's `bin/peat` that resolves to this same binary: the first on PATH, else a
/// well-known profile (`user`'s among them). `None` when there is none: the command is then
/// `peat` on PATH.
pub(crate) fn stable_exe(
    exe: &Path,
    path_var: Option<&std::ffi::OsStr>,
    home: Option<&Path>,
    store_dir: Option<&Path>,
    user: Option<&str>,
) -> Option<PathBuf> {
    let real = fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let store = store_dir
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("/nix/store"));
    if !real.starts_with(store) {
        return Some(real);
    }
    let mut dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    if let Some(h) = home {
        dirs.push(h.join(".nix-profile/bin"));
        dirs.push(h.join(".local/state/nix/profile/bin"));
    }
    if let Some(user) = user.filter(|u| !u.is_empty()) {
        dirs.push(PathBuf::from(format!("/etc/profiles/per-user/{user}/bin")));
    }
    dirs.push(PathBuf::from("/run/current-system/sw/bin"));
    dirs.into_iter()
        .filter(|d| d.is_absolute() && !d.starts_with(store))
        .map(|d| d.join("peat"))
        .find(|p| fs::canonicalize(p).is_ok_and(|r| r == real))
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The handler peat installs on each event.
pub(crate) fn entry(command: &str) -> Value {
    json!({"type": "command", "command": command})
}

/// The configuration fragment `--print` shows: what install merges in.
pub(crate) fn snippet(plan: &Plan) -> Value {
    let mut config = Value::Null;
    // Merging into nothing cannot meet a file of another shape.
    let _ = merge(&mut config, plan);
    config
}

/// Where a harness reads the hooks and skills it runs in every project of this user: what
/// home-manager's `programs.peat` (through `programs.claude-code` and `programs.codex`) or
/// a hand edit installs. Claude Code: `$CLAUDE_CONFIG_DIR/settings.json` and
/// `skills/peat/SKILL.md` there; Codex: `$CODEX_HOME/hooks.json`, and the skill under
/// `$CODEX_HOME/skills` or `~/.agents/skills`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UserLevel {
    pub(crate) harness: Harness,
    pub(crate) config: PathBuf,
    pub(crate) skills: Vec<PathBuf>,
}

impl UserLevel {
    pub(crate) fn of(
        harness: Harness,
        claude_home: &Path,
        codex_home: &Path,
        home: &Path,
    ) -> UserLevel {
        let (config, skills) = match harness {
            Harness::Claude { .. } => (
                claude_home.join("settings.json"),
                vec![claude_home.join("skills/peat/SKILL.md")],
            ),
            Harness::Codex => (
                codex_home.join("hooks.json"),
                vec![
                    codex_home.join("skills/peat/SKILL.md"),
                    home.join(".agents/skills/peat/SKILL.md"),
                ],
            ),
            Harness::Other(o) => (
                home.join(o.user_config),
                vec![home.join(o.user_skills).join("peat/SKILL.md")],
            ),
            Harness::OpenCode => (
                home.join(OPENCODE_CONFIG).join("plugins/peat.js"),
                vec![home.join(OPENCODE_CONFIG).join("skills/peat/SKILL.md")],
            ),
            Harness::Cline => (
                home.join(CLINE_USER_HOOKS),
                vec![home.join(".cline/skills/peat/SKILL.md")],
            ),
        };
        UserLevel {
            harness,
            config,
            skills,
        }
    }

    /// Whether the user-level file runs a peat hook on every event peat uses. Any peat
    /// command counts: the module's is not this binary's path. An unreadable or invalid
    /// file is not peat's to judge here, so it counts as no.
    pub(crate) fn has_hooks(&self) -> bool {
        runs_peat(self.harness, &self.config)
    }

    /// The user-level skill, when one is the skill this binary carries.
    pub(crate) fn current_skill(&self) -> Option<&Path> {
        self.skills
            .iter()
            .map(PathBuf::as_path)
            .find(|p| skill_is_current(p))
    }
}

/// Whether `config` runs some peat hook command on each of the events peat uses in
/// `harness`.
pub(crate) fn runs_peat_on_every_event(config: &Value, harness: Harness) -> bool {
    let plan = harness.plan(&HookCommand::at(None));
    plan.events.iter().all(|(ev, _)| {
        listed(config, ev).is_some_and(|l| match plan.shape {
            Shape::Flat => l.iter().any(is_peat_handler),
            Shape::Grouped => l.iter().any(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_some_and(|l| l.iter().any(is_peat_handler))
            }),
        })
    })
}

/// What `config` lists for `event`.
fn listed<'a>(config: &'a Value, event: &str) -> Option<&'a Vec<Value>> {
    config
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array)
}

/// Whether a hook command is one of peat's, of any generation: a word whose last path
/// component is `peat` followed by one of peat's verbs (`peat hook`, `/abs/peat hook`, the
/// pre-0.4 snippets' `peat capture "$tp"`, `peat brief`, `peat obs`). A word that merely
/// ends in "peat" (`repeat`) is not peat.
pub(crate) fn is_peat_command(cmd: &str) -> bool {
    const VERBS: [&str; 6] = ["hook", "capture", "brief", "distill", "obs", "recall"];
    let words: Vec<&str> = cmd
        .split(|c: char| c.is_whitespace() || ";|&()`$".contains(c))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|pair| {
        let program = pair[0].rsplit('/').next().unwrap_or(pair[0]);
        program == "peat" && VERBS.contains(&pair[1])
    })
}

fn is_peat_handler(h: &Value) -> bool {
    ["command", "bash"]
        .iter()
        .filter_map(|k| h.get(*k).and_then(Value::as_str))
        .any(is_peat_command)
}

/// Merge `plan`'s handlers into `config`. Returns whether anything changed.
///
/// 1. On every event, peat handlers other than the plan's for it are removed (older paths,
///    old snippets, retired events), and so are repeats of it; in the grouped shape a group
///    that this emptied is dropped, and an event left with nothing is removed.
/// 2. Each of the plan's events gets its handler (in a group `{"hooks": [handler]}` where
///    the harness groups them) unless it already runs it; a file of the flat shape says
///    `"version": 1`.
///
/// Everything else (other keys, other tools' hooks, matchers) is kept as it was. Errors
/// when the file's shape is not the one the harness reads (the file is then left alone).
pub(crate) fn merge(config: &mut Value, plan: &Plan) -> Result<bool, String> {
    let before = config.clone();
    if config.is_null() {
        *config = json!({});
    }
    let root = config
        .as_object_mut()
        .ok_or("the file is not a JSON object")?;
    if plan.shape == Shape::Flat {
        root.entry("version").or_insert(json!(1));
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("its \"hooks\" is not an object")?;

    let names: Vec<String> = hooks.keys().cloned().collect();
    for name in names {
        let wanted = plan.handler(&name);
        let Some(listed) = hooks.get_mut(&name).and_then(Value::as_array_mut) else {
            continue;
        };
        let had = listed.len();
        let mut seen = false;
        let mut keep = |h: &Value| {
            if !is_peat_handler(h) {
                return true;
            }
            let keep = wanted == Some(h) && !seen;
            seen |= keep;
            keep
        };
        match plan.shape {
            Shape::Flat => listed.retain(|h| keep(h)),
            Shape::Grouped => {
                let mut emptied = Vec::new();
                for (i, group) in listed.iter_mut().enumerate() {
                    let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                        continue;
                    };
                    let had = list.len();
                    list.retain(|h| keep(h));
                    if had > 0 && list.is_empty() {
                        emptied.push(i);
                    }
                }
                for i in emptied.into_iter().rev() {
                    listed.remove(i);
                }
            }
        }
        if wanted.is_none() && had > 0 && listed.is_empty() {
            hooks.remove(&name);
        }
    }

    for (ev, handler) in &plan.events {
        let listed = hooks
            .entry(*ev)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| format!("its \"hooks\".\"{ev}\" is not a list"))?;
        if !plan.holds(listed, handler) {
            listed.push(match plan.shape {
                Shape::Flat => handler.clone(),
                Shape::Grouped => json!({"hooks": [handler.clone()]}),
            });
        }
    }
    Ok(*config != before)
}

fn holds(group: &Value, entry: &Value) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|l| l.contains(entry))
}

/// The events on which `config` does not run the plan's handler (all of them when it has
/// no hooks).
pub(crate) fn missing_events(config: &Value, plan: &Plan) -> Vec<&'static str> {
    plan.events
        .iter()
        .filter(|(ev, handler)| !listed(config, ev).is_some_and(|l| plan.holds(l, handler)))
        .map(|(ev, _)| *ev)
        .collect()
}

/// Read a configuration file: `None` when it does not exist; an empty file is an empty
/// object. A file that is not JSON is an error naming it.
pub(crate) fn read_config(path: &Path) -> Result<Option<Value>, String> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read it ({e})", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some(json!({})));
    }
    serde_json::from_str(&text).map(Some).map_err(|e| {
        format!(
            "{}: not valid JSON ({e}); fix or move it first",
            path.display()
        )
    })
}

/// Pretty JSON with a trailing newline, as the file is written.
pub(crate) fn render(config: &Value) -> String {
    let mut s = serde_json::to_string_pretty(config).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// What installing did to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Written,
    Current,
}

/// Merge peat's handlers into the harness configuration at `path`.
pub(crate) fn install_config(path: &Path, plan: &Plan) -> Result<Outcome, String> {
    let mut config = read_config(path)?.unwrap_or(Value::Null);
    let changed = merge(&mut config, plan)
        .map_err(|e| format!("{}: {e}; fix or move it first", path.display()))?;
    if !changed {
        return Ok(Outcome::Current);
    }
    write_whole(path, render(&config).as_bytes())?;
    Ok(Outcome::Written)
}

/// Whether the file at `path` runs some peat hook command on each of the events peat uses
/// in `harness` (OpenCode: whether peat's plugin runs one; Cline: whether the folder's
/// script for each of its hooks does).
pub(crate) fn runs_peat(harness: Harness, path: &Path) -> bool {
    match harness {
        Harness::OpenCode => fs::read_to_string(path).is_ok_and(|t| is_peat_command(&t)),
        Harness::Cline => CLINE_EVENTS
            .iter()
            .all(|e| fs::read_to_string(path.join(e)).is_ok_and(|t| is_peat_command(&t))),
        _ => read_config(path)
            .ok()
            .flatten()
            .is_some_and(|v| runs_peat_on_every_event(&v, harness)),
    }
}

/// Wire `harness` in the file at `path`: merge its handlers into the configuration, or
/// (OpenCode) write peat's plugin whole, or (Cline) peat's script in the folder `path`
/// under each of its hooks' names.
pub(crate) fn install_for(
    harness: Harness,
    path: &Path,
    hook: &HookCommand,
) -> Result<Outcome, String> {
    match harness {
        Harness::OpenCode => install_text(path, &opencode_plugin(hook)),
        Harness::Cline => install_scripts(path, &cline_script(hook)),
        _ => install_config(path, &harness.plan(hook)),
    }
}

/// What the file at `path` lacks of `harness`'s wiring: `None` when there is no such file,
/// else the events it does not run peat's handler on (OpenCode: `plugin` when peat's plugin
/// is not the current one).
pub(crate) fn missing_at(
    harness: Harness,
    path: &Path,
    hook: &HookCommand,
) -> Result<Option<Vec<&'static str>>, String> {
    if harness == Harness::OpenCode {
        let current = opencode_plugin(hook);
        return Ok(fs::read_to_string(path)
            .ok()
            .map(|t| if t == current { vec![] } else { vec!["plugin"] }));
    }
    if harness == Harness::Cline {
        let current = cline_script(hook);
        return Ok(path.is_dir().then(|| {
            CLINE_EVENTS
                .into_iter()
                .filter(|e| !is_current_script(&path.join(e), &current))
                .collect()
        }));
    }
    let plan = harness.plan(hook);
    Ok(read_config(path)?.map(|v| missing_events(&v, &plan)))
}

/// What `peat hook install --print` shows for `harness`: the configuration fragment install
/// merges in, or (OpenCode) peat's plugin whole, or (Cline) peat's script.
pub(crate) fn printed(harness: Harness, hook: &HookCommand) -> String {
    match harness {
        Harness::OpenCode => opencode_plugin(hook),
        Harness::Cline => cline_script(hook),
        _ => render(&snippet(&harness.plan(hook))),
    }
}

/// Write `text` at `path`, unless it is already there.
fn install_text(path: &Path, text: &str) -> Result<Outcome, String> {
    if fs::read(path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(Outcome::Current);
    }
    write_whole(path, text.as_bytes())?;
    Ok(Outcome::Written)
}

/// Lay `script` in the folder `dir` under each of Cline's hooks' names, executable, unless
/// each is already there. A script of the same name that is not peat's is the user's own:
/// nothing is written, and the error says how to run peat's beside it (Cline runs one file
/// per hook and folder).
fn install_scripts(dir: &Path, script: &str) -> Result<Outcome, String> {
    let theirs: Vec<String> = CLINE_EVENTS
        .iter()
        .map(|e| dir.join(e))
        .filter(|p| fs::read_to_string(p).is_ok_and(|t| !is_peat_command(&t)))
        .map(|p| p.display().to_string())
        .collect();
    if !theirs.is_empty() {
        return Err(format!(
            "{}: your own Cline {}, which peat's would replace (Cline runs one file per hook in a folder); move {} aside first",
            theirs.join(", "),
            if theirs.len() == 1 { "hook" } else { "hooks" },
            if theirs.len() == 1 { "it" } else { "them" }
        ));
    }
    let mut outcome = Outcome::Current;
    for event in CLINE_EVENTS {
        let path = dir.join(event);
        if is_current_script(&path, script) {
            continue;
        }
        write_whole(&path, script.as_bytes())?;
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make {} executable: {e}", path.display()))?;
        outcome = Outcome::Written;
    }
    Ok(outcome)
}

/// Whether `path` holds `script` and may be run.
fn is_current_script(path: &Path, script: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::read(path).is_ok_and(|b| b == script.as_bytes())
        && fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Lay the skill, unless the same text is already there.
pub(crate) fn install_skill(path: &Path) -> Result<Outcome, String> {
    install_text(path, SKILL)
}

/// Whether the skill at `path` is the one this binary carries.
pub(crate) fn skill_is_current(path: &Path) -> bool {
    fs::read(path).is_ok_and(|b| b == SKILL.as_bytes())
}

/// Replace `path` whole (a temporary file, then a rename), so an interrupted write never
/// leaves half a settings file. A symlinked file is written where it points.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let err = |e: std::io::Error| format!("cannot write {}: {e}", target.display());
    let dir = target.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(err)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.peat-{}", std::process::id()));
    let result = fs::write(&tmp, bytes).and_then(|()| {
        if let Ok(m) = fs::metadata(&target) {
            let _ = fs::set_permissions(&tmp, m.permissions());
        }
        fs::rename(&tmp, &target)
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// Folders between `cwd` (included) and `root` (excluded) with a `.claude/` of their own:
/// Claude Code reads project settings only in the folder it is started in, so a session
/// started there runs that folder's hooks, not the ones installed at `root`.
pub(crate) fn shadowing_claude_dirs(cwd: &Path, root: &Path) -> Vec<PathBuf> {
    if !cwd.starts_with(root) {
        return Vec::new();
    }
    cwd.ancestors()
        .take_while(|d| *d != root)
        .filter(|d| d.join(".claude").is_dir())
        .map(Path::to_path_buf)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: Harness = Harness::Claude { local: false };

    fn peat() -> Value {
        entry(&hook_command(Path::new("/opt/bin/peat"), ""))
    }

    /// Claude Code's handlers for the binary at `/opt/bin/peat`.
    fn plan() -> Plan {
        CLAUDE.plan(&HookCommand::at(Some(PathBuf::from("/opt/bin/peat"))))
    }

    #[test]
    fn the_command_falls_back_to_path_and_survives_quotes() {
        assert_eq!(
            hook_command(Path::new("/opt/bin/peat"), ""),
            "[ -x '/opt/bin/peat' ] && exec '/opt/bin/peat' hook || exec peat hook"
        );
        assert_eq!(
            hook_command(Path::new("/it's here/peat"), ""),
            r"[ -x '/it'\''s here/peat' ] && exec '/it'\''s here/peat' hook || exec peat hook"
        );
    }

    #[test]
    fn a_binary_in_the_nix_store_is_named_by_the_profile_link_that_resolves_to_it() {
        let t = tempfile::tempdir().unwrap();
        let store = t.path().join("nix/store");
        let bin = store.join("abc-peat-0.4/bin/peat");
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        fs::write(&bin, b"#!").unwrap();
        let other = store.join("def-peat-0.3/bin/peat");
        fs::create_dir_all(other.parent().unwrap()).unwrap();
        fs::write(&other, b"#!").unwrap();
        let link = |dir: &str, to: &Path| {
            let d = t.path().join(dir);
            fs::create_dir_all(&d).unwrap();
            std::os::unix::fs::symlink(to, d.join("peat")).unwrap();
            d
        };
        let stale = link("stale/bin", &other);
        let profile = link("home/.nix-profile/bin", &bin);
        let on_path = link("path/bin", &bin);
        let home = t.path().join("home");
        let path =
            std::env::join_paths([&stale, store.join("abc-peat-0.4/bin").as_path(), &on_path])
                .unwrap();

        // PATH first, skipping a link to another build and the store itself.
        assert_eq!(
            stable_exe(&bin, Some(&path), Some(&home), Some(&store), None),
            Some(on_path.join("peat"))
        );
        // Else a well-known profile.
        assert_eq!(
            stable_exe(&bin, None, Some(&home), Some(&store), None),
            Some(profile.join("peat"))
        );
        // Else none: the caller falls back to `peat` on PATH, never the store path.
        assert_eq!(stable_exe(&bin, None, None, Some(&store), None), None);
        // Outside the store, the binary's own real path.
        let plain = t.path().join("plain/peat");
        fs::create_dir_all(plain.parent().unwrap()).unwrap();
        fs::write(&plain, b"#!").unwrap();
        assert_eq!(
            stable_exe(&plain, Some(&path), Some(&home), Some(&store), None),
            Some(fs::canonicalize(&plain).unwrap())
        );
    }

    #[test]
    fn user_level_hooks_count_only_when_every_event_runs_peat() {
        let mut config = json!({"hooks": {}});
        assert!(!runs_peat_on_every_event(&config, CLAUDE));
        merge(&mut config, &CLAUDE.plan(&HookCommand::at(None))).unwrap();
        assert!(runs_peat_on_every_event(&config, CLAUDE));
        config["hooks"]["Stop"] = json!([{"hooks": [{"type": "command", "command": "bd prime"}]}]);
        assert!(!runs_peat_on_every_event(&config, CLAUDE));
        let home_manager = json!({"hooks": Value::Object(
            EVENTS.iter().map(|e| (e.to_string(), json!([{"hooks": [{"type": "command", "command": "/home/u/.nix-profile/bin/peat hook"}]}]))).collect()
        )});
        assert!(runs_peat_on_every_event(&home_manager, CLAUDE));
    }

    #[test]
    fn peat_commands_of_every_generation_are_recognised() {
        for cmd in [
            "peat hook",
            "[ -x '/a/peat' ] && exec '/a/peat' hook || exec peat hook",
            "in=$(cat); peat brief 2>/dev/null || true; exit 0",
            r#"tp=$(jq -r .transcript_path); { peat capture "$tp" --final-msg "$fm"; } 2>/dev/null || true"#,
            "PEAT_DB=/x/db /usr/local/bin/peat capture \"$tp\"",
            "echo '{\"hookSpecificOutput\":{\"additionalContext\":\"deposit: peat obs <subject>\"}}'",
        ] {
            assert!(is_peat_command(cmd), "{cmd}");
        }
        for cmd in [
            "bd prime",
            "repeat hook",
            "npx peatbox hook",
            "echo peat",
            "cat .peat/current-session",
        ] {
            assert!(!is_peat_command(cmd), "{cmd}");
        }
    }

    #[test]
    fn merging_keeps_everything_else_and_is_idempotent() {
        let mut config = json!({
            "permissions": {"allow": ["Bash(cargo test:*)"]},
            "hooks": {
                "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "bd prime"}]}],
                "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt.sh"}]}]
            }
        });
        assert!(merge(&mut config, &plan()).unwrap());
        assert_eq!(
            config["permissions"],
            json!({"allow": ["Bash(cargo test:*)"]})
        );
        let start = config["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(start.len(), 2);
        assert_eq!(start[0]["hooks"][0]["command"], "bd prime");
        assert_eq!(start[1], json!({"hooks": [peat()]}));
        assert_eq!(
            config["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "fmt.sh"
        );
        assert!(missing_events(&config, &plan()).is_empty());
        let once = config.clone();
        assert!(
            !merge(&mut config, &plan()).unwrap(),
            "a second merge changes nothing"
        );
        assert_eq!(config, once);
    }

    #[test]
    fn older_peat_entries_are_replaced_and_retired_events_cleared() {
        let old = entry("peat hook");
        let mut config = json!({"hooks": {
            "SessionStart": [{"hooks": [old.clone(), {"type": "command", "command": "bd prime"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "{ peat capture \"$tp\"; } || true"}]}],
            "UserPromptSubmit": [{"hooks": [old.clone()]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [old.clone(), {"type": "command", "command": "other"}]}]
        }});
        assert!(merge(&mut config, &plan()).unwrap());
        let h = &config["hooks"];
        assert_eq!(
            h["SessionStart"][0]["hooks"],
            json!([{"type": "command", "command": "bd prime"}])
        );
        assert_eq!(h["SessionStart"][1], json!({"hooks": [peat()]}));
        assert_eq!(
            h["Stop"],
            json!([{"hooks": [peat()]}]),
            "the emptied old group is gone"
        );
        assert!(
            h.get("UserPromptSubmit").is_none(),
            "a retired event peat alone used is removed"
        );
        assert_eq!(
            h["PostToolUse"],
            json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "other"}]}])
        );
    }

    #[test]
    fn repeats_of_the_entry_are_folded_into_one() {
        let mut config = json!({"hooks": {"Stop": [{"hooks": [peat()]}, {"hooks": [peat()]}]}});
        merge(&mut config, &plan()).unwrap();
        assert_eq!(config["hooks"]["Stop"], json!([{"hooks": [peat()]}]));
    }

    #[test]
    fn a_file_of_another_shape_is_refused() {
        assert!(merge(&mut json!([1, 2]), &plan()).is_err());
        assert!(merge(&mut json!({"hooks": "none"}), &plan()).is_err());
        assert!(merge(&mut json!({"hooks": {"Stop": {}}}), &plan()).is_err());
        let mut empty = Value::Null;
        assert!(merge(&mut empty, &plan()).unwrap());
        assert!(missing_events(&empty, &plan()).is_empty());
    }

    #[test]
    fn invalid_json_is_an_error_that_names_the_file() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("settings.json");
        fs::write(&p, "{ \"hooks\": ").unwrap();
        let e = install_config(&p, &plan()).unwrap_err();
        assert!(e.contains("settings.json: not valid JSON ("), "{e}");
        assert!(e.ends_with("fix or move it first"), "{e}");
        assert_eq!(fs::read_to_string(&p).unwrap(), "{ \"hooks\": ");
    }

    #[test]
    fn the_skill_is_small_and_names_itself() {
        assert!(SKILL.len() < 4096, "SKILL.md is {} bytes", SKILL.len());
        assert!(
            SKILL.starts_with("---\nname: peat\ndescription: "),
            "{SKILL}"
        );
        let front = SKILL.split("\n---\n").next().unwrap();
        assert!(front.lines().count() >= 3);
    }
}
