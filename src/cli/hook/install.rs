//! `peat hook install`: wire `peat hook` into a harness's project configuration and lay the
//! skill where the harness discovers it.
//!
//! The configuration file belongs to the user and to other tools: the merge keeps every key
//! and every other tool's hook, replaces older peat entries (earlier binary paths, the
//! pre-0.4 shell snippets, events peat no longer uses), and changes nothing when the file is
//! already current. A file that is not valid JSON is refused and left untouched.

use serde_json::{Map, Value, json};
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
}

impl Harness {
    pub(crate) fn config_path(self, root: &Path) -> PathBuf {
        match self {
            Harness::Claude { local: false } => root.join(".claude/settings.json"),
            Harness::Claude { local: true } => root.join(".claude/settings.local.json"),
            Harness::Codex => root.join(".codex/hooks.json"),
        }
    }

    pub(crate) fn skill_path(self, root: &Path) -> PathBuf {
        match self {
            Harness::Claude { .. } => root.join(".claude/skills/peat/SKILL.md"),
            Harness::Codex => root.join(".agents/skills/peat/SKILL.md"),
        }
    }

    /// The agent, as a person names it.
    pub(crate) fn agent_name(self) -> &'static str {
        match self {
            Harness::Claude { .. } => "Claude Code",
            Harness::Codex => "Codex",
        }
    }

    /// The install command for this harness, for messages that say how to fix something.
    pub(crate) fn install_command(self) -> &'static str {
        match self {
            Harness::Claude { local: false } => "peat hook install",
            Harness::Claude { local: true } => "peat hook install --local",
            Harness::Codex => "peat hook install --codex",
        }
    }
}

/// The shell command a harness runs: this binary by absolute path, or `peat` on PATH when
/// that path is gone (a teammate's clone of a committed settings file, an upgrade that moved
/// the binary). Both harnesses run hook commands through a shell.
pub(crate) fn hook_command(exe: &Path) -> String {
    let q = shell_quote(&exe.to_string_lossy());
    format!("[ -x {q} ] && exec {q} hook || exec peat hook")
}

/// The command when no stable path to this binary is known: `peat` on PATH.
pub(crate) const PLAIN_HOOK_COMMAND: &str = "peat hook";

/// The hook command for the running binary, from what the context resolved.
pub(crate) fn this_hook_command(ctx: &crate::cli::ctx::Ctx) -> String {
    match stable_exe(
        &ctx.exe,
        ctx.path_var.as_deref(),
        ctx.home.as_deref(),
        ctx.nix_store_dir.as_deref(),
        ctx.user.as_deref(),
    ) {
        Some(p) => hook_command(&p),
        None => PLAIN_HOOK_COMMAND.to_string(),
    }
}

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
pub(crate) fn snippet(entry: &Value) -> Value {
    let mut hooks = Map::new();
    for ev in EVENTS {
        hooks.insert(ev.to_string(), json!([{"hooks": [entry.clone()]}]));
    }
    json!({ "hooks": hooks })
}

/// Where a harness reads the hooks and skills it runs in every project of this user: what
/// home-manager's `programs.peat` (through `programs.claude-code` and `programs.codex`) or
/// a hand edit installs. Claude Code: `$CLAUDE_CONFIG_DIR/settings.json` and
/// `skills/peat/SKILL.md` there; Codex: `$CODEX_HOME/hooks.json`, and the skill under
/// `$CODEX_HOME/skills` or `~/.agents/skills`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UserLevel {
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
        match harness {
            Harness::Claude { .. } => UserLevel {
                config: claude_home.join("settings.json"),
                skills: vec![claude_home.join("skills/peat/SKILL.md")],
            },
            Harness::Codex => UserLevel {
                config: codex_home.join("hooks.json"),
                skills: vec![
                    codex_home.join("skills/peat/SKILL.md"),
                    home.join(".agents/skills/peat/SKILL.md"),
                ],
            },
        }
    }

    /// Whether the user-level file runs a peat hook on every event peat uses. Any peat
    /// command counts: the module's is not this binary's path. An unreadable or invalid
    /// file is not peat's to judge here, so it counts as no.
    pub(crate) fn has_hooks(&self) -> bool {
        read_config(&self.config)
            .ok()
            .flatten()
            .is_some_and(|v| runs_peat_on_every_event(&v))
    }

    /// The user-level skill, when one is the skill this binary carries.
    pub(crate) fn current_skill(&self) -> Option<&Path> {
        self.skills
            .iter()
            .map(PathBuf::as_path)
            .find(|p| skill_is_current(p))
    }
}

/// Whether `config` runs some peat hook command on each of peat's events.
pub(crate) fn runs_peat_on_every_event(config: &Value) -> bool {
    EVENTS.into_iter().all(|ev| {
        config
            .get("hooks")
            .and_then(|h| h.get(ev))
            .and_then(Value::as_array)
            .is_some_and(|groups| {
                groups.iter().any(|g| {
                    g.get("hooks")
                        .and_then(Value::as_array)
                        .is_some_and(|l| l.iter().any(is_peat_handler))
                })
            })
    })
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
    h.get("command")
        .and_then(Value::as_str)
        .is_some_and(is_peat_command)
}

/// Merge `entry` into `config` on every event peat uses. Returns whether anything changed.
///
/// 1. On every event, peat handlers other than `entry` are removed (older paths, old
///    snippets, retired events), and so are repeats of `entry`; a group that this emptied
///    is dropped, and an event left with no group is removed.
/// 2. Each of peat's events gets a group `{"hooks": [entry]}` unless a group holds it.
///
/// Everything else (other keys, other tools' hooks, matchers) is kept as it was. Errors
/// when the file's shape is not the one harnesses read (the file is then left alone).
pub(crate) fn merge(config: &mut Value, entry: &Value) -> Result<bool, String> {
    let before = config.clone();
    if config.is_null() {
        *config = json!({});
    }
    let root = config
        .as_object_mut()
        .ok_or("the file is not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("its \"hooks\" is not an object")?;

    let names: Vec<String> = hooks.keys().cloned().collect();
    for name in names {
        let ours = EVENTS.contains(&name.as_str());
        let Some(groups) = hooks.get_mut(&name).and_then(Value::as_array_mut) else {
            continue;
        };
        let had_groups = groups.len();
        let mut seen = false;
        let mut emptied = Vec::new();
        for (i, group) in groups.iter_mut().enumerate() {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            let had = list.len();
            list.retain(|h| {
                if !is_peat_handler(h) {
                    return true;
                }
                let keep = ours && h == entry && !seen;
                seen |= keep;
                keep
            });
            if had > 0 && list.is_empty() {
                emptied.push(i);
            }
        }
        for i in emptied.into_iter().rev() {
            groups.remove(i);
        }
        if !ours && had_groups > 0 && groups.is_empty() {
            hooks.remove(&name);
        }
    }

    for ev in EVENTS {
        let groups = hooks
            .entry(ev)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| format!("its \"hooks\".\"{ev}\" is not a list"))?;
        if !groups.iter().any(|g| holds(g, entry)) {
            groups.push(json!({"hooks": [entry.clone()]}));
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

/// The events on which `config` does not run `entry` (all of them when it has no hooks).
pub(crate) fn missing_events(config: &Value, entry: &Value) -> Vec<&'static str> {
    EVENTS
        .into_iter()
        .filter(|ev| {
            !config
                .get("hooks")
                .and_then(|h| h.get(*ev))
                .and_then(Value::as_array)
                .is_some_and(|groups| groups.iter().any(|g| holds(g, entry)))
        })
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

/// Merge peat's hook into the harness configuration under `root`.
pub(crate) fn install_config(path: &Path, entry: &Value) -> Result<Outcome, String> {
    let mut config = read_config(path)?.unwrap_or(Value::Null);
    let changed = merge(&mut config, entry)
        .map_err(|e| format!("{}: {e}; fix or move it first", path.display()))?;
    if !changed {
        return Ok(Outcome::Current);
    }
    write_whole(path, render(&config).as_bytes())?;
    Ok(Outcome::Written)
}

/// Lay the skill, unless the same text is already there.
pub(crate) fn install_skill(path: &Path) -> Result<Outcome, String> {
    if fs::read(path).is_ok_and(|b| b == SKILL.as_bytes()) {
        return Ok(Outcome::Current);
    }
    write_whole(path, SKILL.as_bytes())?;
    Ok(Outcome::Written)
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

    fn peat() -> Value {
        entry(&hook_command(Path::new("/opt/bin/peat")))
    }

    #[test]
    fn the_command_falls_back_to_path_and_survives_quotes() {
        assert_eq!(
            hook_command(Path::new("/opt/bin/peat")),
            "[ -x '/opt/bin/peat' ] && exec '/opt/bin/peat' hook || exec peat hook"
        );
        assert_eq!(
            hook_command(Path::new("/it's here/peat")),
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
        assert!(!runs_peat_on_every_event(&config));
        merge(&mut config, &entry(PLAIN_HOOK_COMMAND)).unwrap();
        assert!(runs_peat_on_every_event(&config));
        config["hooks"]["Stop"] = json!([{"hooks": [{"type": "command", "command": "bd prime"}]}]);
        assert!(!runs_peat_on_every_event(&config));
        let home_manager = json!({"hooks": Value::Object(
            EVENTS.iter().map(|e| (e.to_string(), json!([{"hooks": [{"type": "command", "command": "/home/u/.nix-profile/bin/peat hook"}]}]))).collect()
        )});
        assert!(runs_peat_on_every_event(&home_manager));
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
        assert!(merge(&mut config, &peat()).unwrap());
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
        assert!(missing_events(&config, &peat()).is_empty());
        let once = config.clone();
        assert!(
            !merge(&mut config, &peat()).unwrap(),
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
        assert!(merge(&mut config, &peat()).unwrap());
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
        merge(&mut config, &peat()).unwrap();
        assert_eq!(config["hooks"]["Stop"], json!([{"hooks": [peat()]}]));
    }

    #[test]
    fn a_file_of_another_shape_is_refused() {
        assert!(merge(&mut json!([1, 2]), &peat()).is_err());
        assert!(merge(&mut json!({"hooks": "none"}), &peat()).is_err());
        assert!(merge(&mut json!({"hooks": {"Stop": {}}}), &peat()).is_err());
        let mut empty = Value::Null;
        assert!(merge(&mut empty, &peat()).unwrap());
        assert!(missing_events(&empty, &peat()).is_empty());
    }

    #[test]
    fn invalid_json_is_an_error_that_names_the_file() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("settings.json");
        fs::write(&p, "{ \"hooks\": ").unwrap();
        let e = install_config(&p, &peat()).unwrap_err();
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
