//! The layer rule, checked on the source itself (as rust-analyzer's tidy tests read its tree):
//! every `crate::`/`super::` path in `src/` must point down the layers, and the modules under
//! any one module must not import each other in a circle. `ARCHITECTURE.md` says why the
//! layers are what they are; this test keeps the tree true to it as the code grows.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules, lowest layer first. A module may use any module of a lower layer
/// and none of its own layer or above: modules that share a layer are independent.
const LAYERS: &[&[&str]] = &[
    &["layers", "testing"],
    &["vocab"],
    &["embed"],
    &["ledger"],
    &["views"],
    &["redact"],
    &["capture", "reads"],
    &["cli"],
];

/// One module path used from one place.
#[derive(Debug)]
struct Use {
    /// The module the path is written in (`["views", "tables"]`).
    from: Vec<String>,
    /// The module the path names, as deep as a module file exists for it.
    to: Vec<String>,
    at: String,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `src`-relative module path of a file: `views/mod.rs` is `["views"]`, `views/tables.rs`
/// `["views", "tables"]`, the crate root `[]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    match file.as_str() {
        "mod.rs" | "lib.rs" | "main.rs" => {}
        f => parts.push(f.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// The longest prefix of `path` that names a module with a file of its own.
fn module_prefix(path: &[String]) -> Vec<String> {
    let mut dir = src();
    let mut out = Vec::new();
    for seg in path {
        let file = dir.join(format!("{seg}.rs"));
        let folder = dir.join(seg).join("mod.rs");
        if !file.is_file() && !folder.is_file() {
            break;
        }
        out.push(seg.clone());
        dir = dir.join(seg);
    }
    out
}

/// `text` with comments, string and char literals blanked to spaces (newlines kept, so
/// offsets still give line numbers): a path in a doc comment or a message is not an import.
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < b.len() {
        let rest = |i: usize, k: usize| b.get(i + k).copied();
        if b[i] == '/' && rest(i, 1) == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if b[i] == '/' && rest(i, 1) == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && rest(i, 1) == Some('*') {
                    depth += 1;
                } else if b[i] == '*' && rest(i, 1) == Some('/') {
                    depth -= 1;
                    if depth == 0 {
                        out.push_str("  ");
                        i += 2;
                        break;
                    }
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else if b[i] == 'r' && matches!(rest(i, 1), Some('"' | '#')) && raw_start(&b, i) {
            // A raw string: r"…", r#"…"#, br#"…"#.
            let mut hashes = 0;
            let mut j = i + 1;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let mut k = j + 1;
            while k < b.len() && !b[k..].starts_with(&close.chars().collect::<Vec<_>>()) {
                k += 1;
            }
            let end = (k + close.len()).min(b.len());
            out.extend(b[i..end].iter().map(|c| blank(*c)));
            i = end;
        } else if b[i] == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if b[i] == '\'' && (rest(i, 1) == Some('\\') || rest(i, 2) == Some('\'')) {
            // A char literal ('x', '\n', '\u{7f}'); a lifetime ('a) has no closing quote.
            let mut k = i + 1;
            if rest(i, 1) == Some('\\') {
                k += 2;
            }
            while k < b.len() && b[k] != '\'' {
                k += 1;
            }
            let end = (k + 1).min(b.len());
            out.extend(b[i..end].iter().map(|c| blank(*c)));
            i = end;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` begins a raw string rather than ends an identifier.
fn raw_start(b: &[char], i: usize) -> bool {
    let ident = |i: usize| i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
    !ident(i) || (b[i - 1] == 'b' && !ident(i - 1))
}

/// How many inline modules (`mod tests { … }`) enclose each byte offset of `code`.
fn inline_depths(code: &str) -> Vec<usize> {
    let bytes = code.as_bytes();
    let mut depths = vec![0; bytes.len() + 1];
    // The brace depth at which each open inline module's body started.
    let mut open: Vec<usize> = Vec::new();
    let mut braces = 0;
    let mut pending_mod = false;
    let mut i = 0;
    while i < bytes.len() {
        depths[i] = open.len();
        let c = bytes[i];
        if code[i..].starts_with("mod ") && (i == 0 || !is_ident(bytes[i - 1])) {
            pending_mod = true;
        } else if c == b';' {
            pending_mod = false;
        } else if c == b'{' {
            braces += 1;
            if pending_mod {
                open.push(braces);
                pending_mod = false;
            }
        } else if c == b'}' {
            if open.last() == Some(&braces) {
                open.pop();
            }
            braces -= 1;
        }
        i += 1;
    }
    depths
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths a `use` tree or an inline path names from `start` on (just past `crate::` or
/// `super::`): `a::b`, `{a::b, c::{d, e}}`. Only the leading identifier segments matter.
fn paths_at(code: &str, start: usize) -> Vec<(Vec<String>, usize)> {
    let bytes = code.as_bytes();
    let mut i = start;
    let mut segs = Vec::new();
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            return group(code, i + 1)
                .into_iter()
                .map(|(tail, at)| (segs.iter().cloned().chain(tail).collect(), at))
                .collect();
        }
        let s = i;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
        if s == i {
            break;
        }
        segs.push(code[s..i].to_string());
        if code[i..].starts_with("::") {
            i += 2;
        } else {
            break;
        }
    }
    vec![(segs, start)]
}

/// The items of a `{…}` group starting at `start` (just past the brace).
fn group(code: &str, start: usize) -> Vec<(Vec<String>, usize)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut item = start;
    let mut depth = 0;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' if depth == 0 => {
                out.extend(paths_at(code, item));
                break;
            }
            b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.extend(paths_at(code, item));
                item = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Every module path written in the file at `rel`, resolved to the module it names.
fn uses_in(rel: &Path, text: &str) -> Vec<Use> {
    let code = code_only(text);
    let depths = inline_depths(&code);
    let here = module_of(rel);
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = code[i..].find(['c', 's']) {
        let s = i + off;
        i = s + 1;
        if s > 0 && (is_ident(bytes[s - 1]) || bytes[s - 1] == b':') {
            continue;
        }
        // `crate::`, or one or more `super::`.
        let (base, mut at) = if code[s..].starts_with("crate::") {
            (Some(Vec::new()), s + "crate::".len())
        } else {
            (None, s)
        };
        let base = match base {
            Some(b) => b,
            None => {
                let mut ups: usize = 0;
                while code[at..].starts_with("super::") {
                    ups += 1;
                    at += "super::".len();
                }
                if ups == 0 {
                    continue;
                }
                // Within an inline module, the first `super`s only climb back to the file.
                let Some(ups) = ups.checked_sub(depths[s]).filter(|u| *u > 0) else {
                    continue;
                };
                let Some(keep) = here.len().checked_sub(ups) else {
                    continue;
                };
                here[..keep].to_vec()
            }
        };
        let line = code[..s].matches('\n').count() + 1;
        for (tail, _) in paths_at(&code, at) {
            let full: Vec<String> = base.iter().cloned().chain(tail).collect();
            out.push(Use {
                from: here.clone(),
                to: module_prefix(&full),
                at: format!("src/{}:{line}", rel.display()),
            });
        }
        i = at;
    }
    out
}

fn all_uses() -> Vec<Use> {
    let root = src();
    walkdir::WalkDir::new(&root)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .flat_map(|p| {
            let rel = p.strip_prefix(&root).unwrap();
            uses_in(rel, &fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top))
}

/// What is wrong with the imports `uses` make: one line per import up or across the
/// layers, one per circle among the modules under one module.
fn violations(uses: &[Use]) -> Vec<String> {
    let mut wrong = Vec::new();
    // Edges among the children of each module, with one place each is written.
    let mut siblings: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for u in uses {
        let shared = u.from.iter().zip(&u.to).take_while(|(a, b)| a == b).count();
        let (Some(from), Some(to)) = (u.from.get(shared), u.to.get(shared)) else {
            continue; // within one module, or into a module from inside it
        };
        if shared == 0 {
            match (layer_of(from), layer_of(to)) {
                (Some(f), Some(t)) if t < f => {}
                (Some(_), Some(_)) => wrong.push(format!(
                    "{}: `{from}` imports `{}`, which is not in a lower layer",
                    u.at,
                    u.to.join("::")
                )),
                _ => wrong.push(format!(
                    "{}: `{from}` or `{to}` is in no layer: add it to LAYERS and ARCHITECTURE.md",
                    u.at
                )),
            }
            continue;
        }
        siblings
            .entry(u.from[..shared].to_vec())
            .or_default()
            .entry((from.clone(), to.clone()))
            .or_insert_with(|| u.at.clone());
    }
    for (parent, edges) in &siblings {
        for cycle in cycles(edges) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    format!(
                        "{} -> {} ({})",
                        w[0],
                        w[1],
                        edges[&(w[0].clone(), w[1].clone())]
                    )
                })
                .collect();
            wrong.push(format!(
                "the modules under `{}` import each other in a circle: {}",
                parent.join("::"),
                steps.join(", ")
            ));
        }
    }
    wrong
}

/// One circle (first node repeated at the end) through each strongly connected group of
/// more than one node.
fn cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let next = |n: &String| -> Vec<&String> {
        edges
            .keys()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b)
            .collect()
    };
    let mut seen_in_cycle: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for start in nodes {
        if seen_in_cycle.contains(start) {
            continue;
        }
        // A shortest path from `start` back to itself, breadth first.
        let mut back: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut found = false;
        while let Some(n) = queue.pop_front() {
            for m in next(n) {
                if m == start {
                    back.insert(start, n);
                    found = true;
                    break;
                }
                if !back.contains_key(m) {
                    back.insert(m, n);
                    queue.push_back(m);
                }
            }
            if found {
                break;
            }
        }
        if !found {
            continue;
        }
        let mut path = vec![start.clone()];
        let mut at = back[start];
        while at != start {
            path.push(at.clone());
            at = back[at];
        }
        path.push(start.clone());
        path.reverse();
        seen_in_cycle.extend(path.iter().cloned());
        out.push(path);
    }
    out
}

#[test]
fn every_import_points_down_the_layers_and_no_modules_import_each_other_in_a_circle() {
    let top: BTreeSet<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| module_of(Path::new(&e.unwrap().file_name())))
        .filter_map(|m| m.first().cloned())
        .collect();
    let unplaced: Vec<&String> = top.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules in no layer: {unplaced:?}");
    let wrong = violations(&all_uses());
    assert!(wrong.is_empty(), "\n{}\n", wrong.join("\n"));
}

#[test]
fn the_module_map_names_every_module() {
    let map = fs::read_to_string(src().join("../ARCHITECTURE.md")).unwrap();
    let missing: Vec<String> = walkdir::WalkDir::new(src())
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(src()).unwrap().to_path_buf();
            // The crate roots, and a module's tests split into their own file.
            let name = module_of(&rel).pop()?;
            let named = [
                format!("`{name}`"),
                format!("`{name}/`"),
                format!("{name}.rs`"),
            ]
            .iter()
            .any(|n| map.contains(n.as_str()));
            (name != "tests" && !named).then(|| rel.display().to_string())
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's module map does not name: {missing:?}"
    );
}

#[test]
fn the_scanner_sees_grouped_super_and_inline_paths_and_skips_comments_and_strings() {
    let text = "use crate::{views::{tables::Table, Views}, vocab::event};\n\
                // crate::cli::nothing\n\
                fn f() { let s = \"crate::cli::x\"; super::log::steps(); }\n\
                fn h() { let b = br#\"{\"#; let c = '{'; }\n\
                mod tests { use super::*; fn g() { super::super::files::x(); } }\n";
    let got: Vec<(String, String)> = uses_in(Path::new("reads/session.rs"), text)
        .into_iter()
        .map(|u| (u.to.join("::"), u.at))
        .collect();
    let want = [
        ("views::tables", "src/reads/session.rs:1"),
        ("views", "src/reads/session.rs:1"),
        ("vocab::event", "src/reads/session.rs:1"),
        ("reads::log", "src/reads/session.rs:3"),
        ("reads::files", "src/reads/session.rs:5"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
}
