//! The user's rules: `redact.toml`, beside the store.
//!
//! ```toml
//! # Never redact these (matched against the would-be secret).
//! allow = ["AKIAIOSFODNN7EXAMPLE", "^sk_test_"]
//!
//! [[rule]]
//! kind = "acme-license"        # shown in the marker: [REDACTED:acme-license:…]
//! regex = "ACME-[0-9A-F]{24}"  # with a capture group, only the first group is redacted
//! ```
//!
//! The file is read from the `.peat` directory that holds the store (`.peat/redact.toml`,
//! beside `.peat/db`) and from the store directory itself (where `$PEAT_DB` points).

use regex::Regex;
use serde::Deserialize;
use std::path::{Path, PathBuf};

use super::RedactError;

pub(crate) const RULES_FILE: &str = "redact.toml";

/// Rules and allowances read from the user's files.
#[derive(Default)]
pub(crate) struct UserRules {
    pub(crate) rules: Vec<UserRule>,
    pub(crate) allow: Vec<Regex>,
}

pub(crate) struct UserRule {
    pub(crate) kind: String,
    pub(crate) regex: Regex,
    /// `<file>: rule N`.
    pub(crate) source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    rule: Vec<RuleEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleEntry {
    kind: String,
    regex: String,
}

/// Where the rules of the store at `store` may be: `.peat/redact.toml` when the store is
/// `.peat/db`, and `redact.toml` inside the store.
pub(crate) fn files(store: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(parent) = store.parent()
        && parent.file_name().is_some_and(|n| n == ".peat")
    {
        out.push(parent.join(RULES_FILE));
    }
    out.push(store.join(RULES_FILE));
    out
}

/// Read every file of `paths` that exists.
pub(crate) fn load(paths: &[PathBuf]) -> Result<UserRules, RedactError> {
    let mut all = UserRules::default();
    for path in paths {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(RedactError::Io {
                    what: "read",
                    path: path.clone(),
                    source,
                });
            }
        };
        let parsed = parse(path, &text)?;
        all.rules.extend(parsed.rules);
        all.allow.extend(parsed.allow);
    }
    Ok(all)
}

/// Parse one file's text; errors name the file and the entry.
pub(crate) fn parse(path: &Path, text: &str) -> Result<UserRules, RedactError> {
    let bad = |detail: String| RedactError::Config {
        path: path.to_path_buf(),
        detail,
    };
    let file: File = toml::from_str(text).map_err(|e| {
        bad(format!(
            "{} (expected `allow = [\"regex\", …]` and `[[rule]]` tables with `kind` and `regex`)",
            e.message()
        ))
    })?;
    let mut out = UserRules::default();
    for (i, a) in file.allow.iter().enumerate() {
        let re = Regex::new(a).map_err(|e| bad(format!("allow[{i}] is not a regex: {e}")))?;
        out.allow.push(re);
    }
    for (i, r) in file.rule.into_iter().enumerate() {
        let n = i + 1;
        let kind_ok = !r.kind.is_empty()
            && r.kind.len() <= 40
            && r.kind
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !kind_ok {
            return Err(bad(format!(
                "rule {n}: kind {:?} must be 1-40 characters of a-z, 0-9 and '-'",
                r.kind
            )));
        }
        let regex = Regex::new(&r.regex)
            .map_err(|e| bad(format!("rule {n} ({}): not a regex: {e}", r.kind)))?;
        if regex.is_match("") {
            return Err(bad(format!(
                "rule {n} ({}): the regex matches the empty string, so it would match everywhere",
                r.kind
            )));
        }
        out.rules.push(UserRule {
            kind: r.kind,
            regex,
            source: format!("{}: rule {n}", path.display()),
        });
    }
    Ok(out)
}
