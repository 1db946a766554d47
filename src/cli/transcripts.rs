//! Transcripts on disk, before they are captured: finding them below folders, and which
//! project each belongs to (read from its first lines), which `peat setup` and `peat import`
//! into a project ledger choose their files by.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

use crate::cli::scope::Project;

/// The transcripts below some folders, and what could not be read on the way there.
#[derive(Debug, Default)]
pub struct Found {
    pub files: Vec<PathBuf>,
    /// `<folder>: <why>` for each folder that could not be read.
    pub unreadable: Vec<String>,
}

impl Found {
    /// Every transcript below `dir` ([`is_transcript_name`]), not following links to folders. A
    /// folder that cannot be read is kept in `unreadable`, never taken for an empty one.
    pub fn walk(&mut self, dir: &Path) {
        for entry in walkdir::WalkDir::new(dir) {
            let entry = match entry {
                Ok(entry) => entry,
                // A folder gone since it was listed (or a root that does not exist) holds
                // nothing to import.
                Err(e) if e.io_error().map(std::io::Error::kind) == Some(ErrorKind::NotFound) => {
                    continue;
                }
                Err(e) => {
                    let place = e.path().unwrap_or(dir).display().to_string();
                    let why = e
                        .io_error()
                        .map_or_else(|| e.to_string(), ToString::to_string);
                    self.unreadable.push(format!("{place}: {why}"));
                    continue;
                }
            };
            let path = entry.path();
            let file = entry.file_type().is_file() || entry.path_is_symlink() && path.is_file();
            if file && is_transcript_name(path) {
                self.files.push(entry.into_path());
            }
        }
    }
}

/// OpenCode's database, by its name.
pub(crate) const OPENCODE_DB: &str = "opencode.db";

/// Goose's database, by its name (in a `sessions` folder).
pub(crate) const GOOSE_DB: &str = "sessions.db";

/// Whether a file's name is one a harness gives its transcripts: JSONL (plain or zstd),
/// Gemini CLI's older `chats/session-*.json` documents, OpenCode's database and its older
/// `storage/session/<project>/<id>.json` sessions, Goose's `sessions/sessions.db`, Crush's
/// `crush.db`, a Cline task's `tasks/<id>/api_conversation_history.json`, Aider's
/// `.aider.chat.history.md`, Amp's `threads/T-<id>.json`. What it holds is decided when it is
/// read.
fn is_transcript_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let in_chats = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "chats");
    name.ends_with(".jsonl")
        || name.ends_with(".jsonl.zst")
        || (in_chats && name.starts_with("session-") && name.ends_with(".json"))
        || name == OPENCODE_DB
        || (name == GOOSE_DB
            && path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|d| d == "sessions"))
        || name == crate::capture::crush::DB
        || (name.ends_with(".json") && crate::capture::source::stored_root(path).is_some())
        || (name == crate::capture::cline::HISTORY_FILE && in_tasks(path))
        || name == crate::capture::aider::HISTORY_FILE
        || (name.starts_with("T-") && name.ends_with(".json") && in_threads(path))
}

/// Whether `path` is in an Amp `threads/` folder (`threads3/`, in VS Code's storage).
fn in_threads(path: &Path) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "threads" || d == "threads3")
}

/// Whether `path` is in a `tasks/<id>/` folder, as a Cline task's files are.
fn in_tasks(path: &Path) -> bool {
    path.parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|d| d == "tasks")
}

/// This project's transcripts: Claude Code session folders whose cwd is in the project
/// (found by Claude Code's folder name, confirmed by a recorded cwd when the name is only a
/// prefix), and Codex rollouts whose first line (`session_meta`) names a cwd in it; with the
/// folders that could not be read on the way.
pub(crate) fn project_transcripts(
    project: &Project,
    claude_home: &Path,
    codex_home: &Path,
) -> Found {
    let roots = &project.roots;
    let mut seen = HashMap::new();
    let mut ours = Found::default();
    let projects = claude_home.join("projects");
    let slugs: Vec<String> = roots
        .iter()
        .map(|r| crate::cli::hook::claude_slug(r))
        .collect();
    if let Ok(dirs) = std::fs::read_dir(&projects) {
        for dir in dirs.flatten() {
            let name = dir.file_name().to_string_lossy().into_owned();
            let path = dir.path();
            if !path.is_dir() {
                continue;
            }
            // Claude Code cuts long names at 200 characters and appends a hash.
            let exact = slugs.contains(&name);
            let prefix = slugs
                .iter()
                .any(|s| name.starts_with(&s[..s.len().min(200)]));
            if !exact && !prefix {
                continue;
            }
            let mut found = Found::default();
            found.walk(&path);
            ours.unreadable.extend(found.unreadable);
            let this_project = exact
                || found
                    .files
                    .iter()
                    .find_map(|f| first_value(f, "cwd"))
                    .is_some_and(|cwd| project.holds(&cwd, &mut seen));
            if this_project {
                ours.files.extend(found.files);
            }
        }
    }
    for dir in ["sessions", "archived_sessions"] {
        let mut found = Found::default();
        found.walk(&codex_home.join(dir));
        ours.unreadable.extend(found.unreadable);
        ours.files.extend(found.files.into_iter().filter(|f| {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with("rollout-"))
                && rollout_cwd(f).is_some_and(|cwd| project.holds(&cwd, &mut seen))
        }));
    }
    ours
}

/// The transcripts of `found` that belong to `project`, and how many were left out. A
/// transcript whose first lines name no working directory is kept: only one that says it
/// worked elsewhere is another project's. A database is kept: it holds many projects'
/// sessions, and its capture takes the project's (`capture::Place`).
pub(crate) fn of_project(found: Found, project: &Project) -> (Found, usize) {
    let mut seen = HashMap::new();
    let before = found.files.len();
    let files: Vec<PathBuf> = found
        .files
        .into_iter()
        .filter(|f| {
            is_database(f) || transcript_cwd(f).is_none_or(|cwd| project.holds(&cwd, &mut seen))
        })
        .collect();
    let left_out = before - files.len();
    (
        Found {
            files,
            unreadable: found.unreadable,
        },
        left_out,
    )
}

/// Whether `path` is a SQLite database (by its header).
fn is_database(path: &Path) -> bool {
    crate::capture::source::kind_of(path).is_ok_and(|k| k == crate::capture::source::Kind::Database)
}

/// The working directory a transcript records: a Codex rollout's `session_meta`, Gemini
/// CLI's `.project_root` beside its `chats/`, else the first `cwd` its first lines give, at a
/// line's top (Claude Code, Pi, Qwen Code, droid) or inside it (Copilot CLI's
/// `data.context.cwd`).
fn transcript_cwd(path: &Path) -> Option<String> {
    rollout_cwd(path)
        .or_else(|| gemini_root(path))
        .or_else(|| first_value(path, "cwd"))
}

/// The project a Gemini CLI chat belongs to: the `.project_root` its project folder keeps
/// beside `chats/`.
fn gemini_root(path: &Path) -> Option<String> {
    let chats = path
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "chats"))?;
    let root = std::fs::read_to_string(chats.parent()?.join(".project_root")).ok()?;
    Some(root.trim().to_string()).filter(|r| !r.is_empty())
}

/// The first non-empty string `key` in `v`, its top first, then no more than two objects
/// down.
fn find_key(v: &serde_json::Value, key: &str, depth: u8) -> Option<String> {
    let obj = v.as_object()?;
    if let Some(s) = obj
        .get(key)
        .and_then(|c| c.as_str())
        .filter(|s| !s.is_empty())
    {
        return Some(s.to_string());
    }
    if depth == 0 {
        return None;
    }
    obj.values()
        .find_map(|inner| find_key(inner, key, depth - 1))
}

/// The cwd a Codex rollout's first line (`session_meta`) records.
fn rollout_cwd(path: &Path) -> Option<String> {
    let line = first_line(path)?;
    let v: serde_json::Value = serde_json::from_str(&line).ok()?;
    let meta = if v.get("type").and_then(|t| t.as_str()) == Some("session_meta") {
        v.get("payload")?
    } else {
        &v
    };
    meta.get("cwd")?.as_str().map(str::to_string)
}

/// The first string `key` in the first 50 lines of a transcript (see [`find_key`]).
fn first_value(path: &Path, key: &str) -> Option<String> {
    let reader = open_text(path)?;
    for line in reader.lines().take(50) {
        let line = line.ok()?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
            && let Some(s) = find_key(&v, key, 2)
        {
            return Some(s);
        }
    }
    None
}

/// The first line of a transcript, read no further than 1 MiB.
fn first_line(path: &Path) -> Option<String> {
    let reader = open_text(path)?;
    let mut line = String::new();
    reader.take(1 << 20).read_line(&mut line).ok()?;
    Some(line)
}

/// A transcript for reading lines, decompressing a `.zst` rollout.
fn open_text(path: &Path) -> Option<Box<dyn BufRead>> {
    let file = std::fs::File::open(path).ok()?;
    if path.extension().is_some_and(|e| e == "zst") {
        let decoder = zstd::stream::read::Decoder::new(file).ok()?;
        Some(Box::new(BufReader::new(decoder)))
    } else {
        Some(Box::new(BufReader::new(file)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn the_other_agents_transcripts_are_placed_by_their_own_cwd() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let root = base.join("acme-api");
        fs::create_dir_all(root.join(".git")).unwrap();
        let write = |p: PathBuf, text: String| {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, text).unwrap();
            p
        };
        // Copilot CLI names the folder inside its start event's data.
        let copilot = |cwd: &Path| {
            format!(
                "{{\"type\":\"session.start\",\"data\":{{\"context\":{{\"cwd\":\"{}\"}}}}}}\n",
                cwd.display()
            )
        };
        let ours = write(base.join("copilot/a/events.jsonl"), copilot(&root));
        write(
            base.join("copilot/b/events.jsonl"),
            copilot(Path::new("/elsewhere")),
        );
        // Gemini CLI keeps the project's folder beside its chats.
        let gemini = |dir: &str, project: &Path| {
            write(
                base.join(format!("gemini/{dir}/.project_root")),
                project.display().to_string(),
            );
            write(
                base.join(format!("gemini/{dir}/chats/session-1.json")),
                "{\"sessionId\":\"s\",\"messages\":[]}".into(),
            )
        };
        let chat = gemini("p1", &root);
        gemini("p2", Path::new("/elsewhere"));
        let mut found = Found::default();
        found.walk(&base);
        let (kept, left_out) = of_project(found, &Project::of(&root).unwrap());
        let mut got = kept.files;
        got.sort();
        let mut want = vec![ours, chat];
        want.sort();
        assert_eq!((got, left_out), (want, 2));
    }

    #[test]
    fn only_this_projects_transcripts_are_chosen() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let root = base.join("acme-api");
        fs::create_dir_all(root.join(".git")).unwrap();
        let claude = base.join("claude");
        let codex = base.join("codex");
        let slug = crate::cli::hook::claude_slug(&root);
        let line = |cwd: &Path| format!("{{\"type\":\"user\",\"cwd\":\"{}\"}}\n", cwd.display());
        let write = |p: PathBuf, text: String| {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, text).unwrap();
            p
        };
        let here = write(claude.join(format!("projects/{slug}/a.jsonl")), line(&root));
        let sub = write(
            claude.join(format!("projects/{slug}-src/b.jsonl")),
            line(&root.join("src")),
        );
        // A sibling whose name starts the same: `acme-api-old` is not under `acme-api`.
        write(
            claude.join(format!("projects/{slug}-old/c.jsonl")),
            line(&base.join("acme-api-old")),
        );
        write(
            claude.join("projects/-elsewhere/d.jsonl"),
            line(Path::new("/elsewhere")),
        );
        let meta = |cwd: &Path| {
            format!(
                "{{\"timestamp\":\"2026-05-04T10:15:02.311Z\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"x\",\"cwd\":\"{}\"}}}}\n",
                cwd.display()
            )
        };
        let rollout = write(
            codex.join("sessions/2026/05/04/rollout-2026-05-04T10-15-02-x.jsonl"),
            meta(&root),
        );
        write(
            codex.join("sessions/2026/05/04/rollout-2026-05-04T11-00-00-y.jsonl"),
            meta(Path::new("/elsewhere")),
        );
        let zst = codex.join("archived_sessions/rollout-2026-05-01T10-00-00-z.jsonl.zst");
        fs::create_dir_all(zst.parent().unwrap()).unwrap();
        fs::write(
            &zst,
            zstd::encode_all(meta(&root.join("lib")).as_bytes(), 3).unwrap(),
        )
        .unwrap();

        let project = Project::of(&root).unwrap();
        let mut got = project_transcripts(&project, &claude, &codex).files;
        got.sort();
        let mut want = vec![here, sub, rollout, zst];
        want.sort();
        assert_eq!(got, want);
    }
}
