//! `peat mcp` registered with each harness that takes MCP servers, at user scope: one server
//! serves every project, reading the ledger of the folder the harness starts it in. Claude
//! Code reads its user-scope servers from `mcpServers` in `~/.claude.json`
//! (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set); Codex from `[mcp_servers.NAME]` in
//! `$CODEX_HOME/config.toml`.
//!
//! home-manager registers it elsewhere: Claude Code's `programs.claude-code.mcpServers` lands
//! in a personal plugin (`skills/<plugin>/.mcp.json` under Claude Code's folder), Codex's
//! settings in a `config.toml` linked from the Nix store. A server registered there counts,
//! and nothing is added beside it: a second entry would start a second server.
//!
//! Both files are the user's and their harness's: the merge touches only the `peat` entry,
//! keeps every other server and setting (Codex's TOML with its comments and layout), and
//! changes nothing when the entry is already current. A file that cannot be read as its
//! format is refused and left alone.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::install::{self, Harness, Outcome};
use crate::cli::ctx::Ctx;

/// The name peat's server is registered under.
const NAME: &str = "peat";

/// How a harness starts the server: the command and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Server {
    pub(crate) command: String,
}

impl Server {
    /// This binary by a path that survives upgrades (see `install::stable_exe`), else `peat`
    /// on PATH.
    pub(crate) fn of(ctx: &Ctx) -> Server {
        let command = install::stable_exe(
            &ctx.exe,
            ctx.path_var.as_deref(),
            ctx.home.as_deref(),
            ctx.nix_store_dir.as_deref(),
            ctx.user.as_deref(),
        )
        .map_or_else(|| "peat".to_string(), |p| p.to_string_lossy().into_owned());
        Server { command }
    }

    const ARGS: [&'static str; 1] = ["mcp"];
}

/// The file `harness` reads its user-scope MCP servers from: Claude Code's and Codex's. The
/// other harnesses' MCP settings are not written yet (None).
pub(crate) fn config_path(ctx: &Ctx, harness: Harness) -> Option<PathBuf> {
    Some(match harness {
        Harness::Claude { .. } => {
            let home = ctx.home.clone().unwrap_or_default();
            if ctx.claude_home == home.join(".claude") {
                home.join(".claude.json")
            } else {
                ctx.claude_home.join(".claude.json")
            }
        }
        Harness::Codex => ctx.codex_home.join("config.toml"),
        Harness::Other(_) | Harness::OpenCode | Harness::Cline => return None,
    })
}

/// Whether a registered command runs some peat binary (this one, an older path, the one a
/// Nix profile links): `peat` as its last path component.
fn is_peat(command: &str) -> bool {
    Path::new(command).file_name().is_some_and(|n| n == "peat")
}

/// Claude Code's personal plugins' server lists: where home-manager registers servers.
fn plugin_configs(ctx: &Ctx, harness: Harness) -> Vec<PathBuf> {
    let Harness::Claude { .. } = harness else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(ctx.claude_home.join("skills"))
        .map(|dirs| {
            dirs.filter_map(Result::ok)
                .map(|d| d.path().join(".mcp.json"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Where a peat server is registered other than in a file peat may write: a file linked from
/// elsewhere (writing through the link would fail or be undone), or a plugin.
fn managed_elsewhere(ctx: &Ctx, harness: Harness) -> Result<Option<PathBuf>, String> {
    let Some(path) = config_path(ctx, harness) else {
        return Ok(None);
    };
    let linked = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    if linked && registered(&path, harness)?.is_some() {
        return Ok(Some(path));
    }
    for plugin in plugin_configs(ctx, harness) {
        // A plugin's list is the same shape as `~/.claude.json`'s; one that cannot be read
        // is its owner's to fix, not a reason to refuse.
        if registered(&plugin, harness).ok().flatten().is_some() {
            return Ok(Some(plugin));
        }
    }
    Ok(None)
}

/// Register the server with `harness`, saying on stderr what changed.
pub(crate) fn register(ctx: &Ctx, harness: Harness) -> Result<(), String> {
    let Some(path) = config_path(ctx, harness) else {
        return Ok(());
    };
    let server = Server::of(ctx);
    let shown = path.display();
    if let Some(at) = managed_elsewhere(ctx, harness)? {
        ctx.ui.note(&format!(
            "= {}: peat mcp registered there (managed elsewhere); nothing added to {shown}",
            at.display()
        ));
        return Ok(());
    }
    let outcome = match harness {
        Harness::Claude { .. } => merge_json(&path, &server)?,
        Harness::Codex => merge_toml(&path, &server)?,
        Harness::Other(_) | Harness::OpenCode | Harness::Cline => return Ok(()),
    };
    match outcome {
        Outcome::Written => ctx.ui.note(&format!(
            "✓ {shown}: peat mcp registered for {}",
            harness.agent_name()
        )),
        Outcome::Current => ctx
            .ui
            .note(&format!("= {shown}: peat mcp already registered")),
    }
    Ok(())
}

/// `--check`'s line for `harness`: `Ok` when a peat server is registered, else `Err` with
/// the command that registers it; none for a harness whose servers peat does not write.
pub(crate) fn check(ctx: &Ctx, harness: Harness) -> Result<Option<Result<String, String>>, String> {
    let Some(path) = config_path(ctx, harness) else {
        return Ok(None);
    };
    let shown = path.display();
    if let Some(command) = registered(&path, harness)? {
        return Ok(Some(Ok(format!(
            "{shown}: peat mcp registered ({command})"
        ))));
    }
    Ok(Some(match managed_elsewhere(ctx, harness)? {
        Some(at) => Ok(format!("{}: peat mcp registered", at.display())),
        None => Err(format!(
            "{shown}: peat mcp not registered for {} — run: {}",
            harness.agent_name(),
            harness.install_command()
        )),
    }))
}

/// The command of the peat server registered in `path`, if one is.
fn registered(path: &Path, harness: Harness) -> Result<Option<String>, String> {
    let entry = match harness {
        Harness::Claude { .. } => install::read_config(path)?
            .and_then(|v| v.get("mcpServers")?.get(NAME).cloned())
            .map(|e| (e["command"].clone(), e["args"].clone())),
        Harness::Codex => read_toml(path)?.and_then(|doc| {
            let t = doc.get("mcp_servers")?.get(NAME)?;
            let command = t.get("command")?.as_str()?.to_string();
            let args: Vec<Value> = t
                .get("args")?
                .as_array()?
                .iter()
                .map(|a| json!(a.as_str()))
                .collect();
            Some((json!(command), Value::Array(args)))
        }),
        Harness::Other(_) | Harness::OpenCode | Harness::Cline => None,
    };
    Ok(entry.and_then(|(command, args)| {
        let command = command.as_str()?.to_string();
        (is_peat(&command) && args == json!(Server::ARGS)).then_some(command)
    }))
}

/// Claude Code's entry for the server.
fn claude_entry(server: &Server) -> Value {
    json!({"type": "stdio", "command": server.command, "args": Server::ARGS, "env": {}})
}

fn merge_json(path: &Path, server: &Server) -> Result<Outcome, String> {
    let mut config = install::read_config(path)?.unwrap_or_else(|| json!({}));
    let refused = |what: &str| format!("{}: {what}; fix or move it first", path.display());
    let servers = config
        .as_object_mut()
        .ok_or_else(|| refused("the file is not a JSON object"))?
        .entry("mcpServers")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| refused("its \"mcpServers\" is not an object"))?;
    let entry = claude_entry(server);
    if servers.get(NAME) == Some(&entry) {
        return Ok(Outcome::Current);
    }
    servers.insert(NAME.into(), entry);
    install::write_whole(path, install::render(&config).as_bytes())?;
    Ok(Outcome::Written)
}

fn read_toml(path: &Path) -> Result<Option<toml_edit::DocumentMut>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read it ({e})", path.display())),
    };
    text.parse().map(Some).map_err(|e: toml_edit::TomlError| {
        format!(
            "{}: not valid TOML ({}); fix or move it first",
            path.display(),
            e.to_string().trim()
        )
    })
}

fn merge_toml(path: &Path, server: &Server) -> Result<Outcome, String> {
    let mut doc = read_toml(path)?.unwrap_or_default();
    let before = doc.to_string();
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            // `[mcp_servers.peat]`, not an empty `[mcp_servers]` above it.
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| {
            format!(
                "{}: its mcp_servers is not a table; fix or move it first",
                path.display()
            )
        })?;
    let mut ours = toml_edit::Table::new();
    ours.insert("command", toml_edit::value(server.command.as_str()));
    ours.insert(
        "args",
        toml_edit::value(Server::ARGS.into_iter().collect::<toml_edit::Array>()),
    );
    let current = servers
        .get(NAME)
        .and_then(|t| t.as_table())
        .is_some_and(|t| {
            t.get("command").and_then(|c| c.as_str()) == Some(server.command.as_str())
                && t.get("args").and_then(|a| a.as_array()).is_some_and(|a| {
                    a.iter()
                        .map(|v| v.as_str())
                        .eq(Server::ARGS.iter().map(|s| Some(*s)))
                })
        });
    if !current {
        servers.insert(NAME, toml_edit::Item::Table(ours));
    }
    let after = doc.to_string();
    if after == before {
        return Ok(Outcome::Current);
    }
    install::write_whole(path, after.as_bytes())?;
    Ok(Outcome::Written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server {
            command: "/opt/bin/peat".into(),
        }
    }

    #[test]
    fn claude_json_keeps_the_users_servers_and_a_second_merge_changes_nothing() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join(".claude.json");
        std::fs::write(
            &p,
            r#"{"numStartups": 3, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}}, "projects": {}}"#,
        )
        .unwrap();
        assert_eq!(merge_json(&p, &server()).unwrap(), Outcome::Written);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["numStartups"], 3);
        assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
        assert_eq!(v["mcpServers"]["peat"]["args"], json!(["mcp"]));
        let once = std::fs::read_to_string(&p).unwrap();
        assert_eq!(merge_json(&p, &server()).unwrap(), Outcome::Current);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), once);
        let harness = Harness::Claude { local: false };
        assert_eq!(
            registered(&p, harness).unwrap().as_deref(),
            Some("/opt/bin/peat")
        );
    }

    #[test]
    fn codex_toml_keeps_comments_and_other_servers_and_replaces_an_older_peat() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        let mine = "# my model\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep\nargs = [\"--stdio\"]\n\n[mcp_servers.peat]\ncommand = \"/old/peat\"\nargs = [\"mcp\"]\n";
        std::fs::write(&p, mine).unwrap();
        assert_eq!(merge_toml(&p, &server()).unwrap(), Outcome::Written);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# my model\nmodel = \"o4\"\n"), "{text}");
        assert!(text.contains("command = \"docs-mcp\" # keep"), "{text}");
        assert!(
            text.contains("[mcp_servers.peat]\ncommand = \"/opt/bin/peat\"\nargs = [\"mcp\"]"),
            "{text}"
        );
        assert!(!text.contains("/old/peat"), "{text}");
        assert_eq!(merge_toml(&p, &server()).unwrap(), Outcome::Current);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        assert_eq!(
            registered(&p, Harness::Codex).unwrap().as_deref(),
            Some("/opt/bin/peat")
        );
    }

    #[test]
    fn a_new_codex_config_gets_only_peats_table() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("codex/config.toml");
        assert_eq!(merge_toml(&p, &server()).unwrap(), Outcome::Written);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "[mcp_servers.peat]\ncommand = \"/opt/bin/peat\"\nargs = [\"mcp\"]\n"
        );
    }

    #[test]
    fn files_of_another_shape_are_refused_and_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let j = t.path().join(".claude.json");
        std::fs::write(&j, r#"{"mcpServers": []}"#).unwrap();
        assert!(
            merge_json(&j, &server())
                .unwrap_err()
                .contains("\"mcpServers\" is not an object")
        );
        assert_eq!(
            std::fs::read_to_string(&j).unwrap(),
            r#"{"mcpServers": []}"#
        );
        let c = t.path().join("config.toml");
        std::fs::write(&c, "model = [").unwrap();
        assert!(
            merge_toml(&c, &server())
                .unwrap_err()
                .contains("not valid TOML")
        );
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "model = [");
    }

    #[test]
    fn only_a_peat_binary_running_mcp_counts_as_registered() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join(".claude.json");
        let claude = Harness::Claude { local: false };
        for (command, args, counts) in [
            ("/nix/profile/bin/peat", json!(["mcp"]), true),
            ("peat", json!(["mcp"]), true),
            ("/usr/bin/repeat", json!(["mcp"]), false),
            ("peat", json!(["serve"]), false),
        ] {
            let v = json!({"mcpServers": {"peat": {"command": command, "args": args}}});
            std::fs::write(&p, v.to_string()).unwrap();
            assert_eq!(
                registered(&p, claude).unwrap().is_some(),
                counts,
                "{command}"
            );
        }
    }
}
