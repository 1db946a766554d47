//! Secrets are redacted before anything is stored.
//!
//! Every text captured (prompts, agent prose, tool details, edit payloads, commit messages,
//! observations, and the parser state a capture cursor carries) passes through a
//! [`Redactor`] on its way into a ledger write, so the ledger, the views, the keyword index
//! and the vectors only ever see redacted text. Each secret becomes
//! `[REDACTED:<kind>:<hash8>]`: `hash8` is the first 8 hex digits of an HMAC-SHA256 of the
//! secret under a random key kept in the store (`redact.key`, mode 0600), so equal secrets
//! correlate inside one store and the marker cannot be reversed or guessed elsewhere.
//!
//! The rules are the built-in set ([`rules`], each pattern's source documented there),
//! then the user's `redact.toml` ([`config`]): more `[[rule]]`s and an `allow` list.
//! Redaction is idempotent: a marker never matches a rule, so redacting twice changes
//! nothing (which is what lets `peat redact` re-apply the rules to a whole store).

pub(crate) mod apply;
pub(crate) mod config;
pub(crate) mod key;
pub(crate) mod retro;

pub(crate) mod rules;

use hmac::{Hmac, KeyInit, Mac};
use regex::{Regex, RegexSet, RegexSetBuilder};
use sha2::Sha256;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub(crate) use rules::RULES_VERSION;

/// Setting this to `off` turns capture-time redaction off. It exists to measure what
/// redaction costs (bench/capture.sh); it is never needed otherwise.
pub(crate) const SWITCH_ENV: &str = "PEAT_REDACT";

/// The marker's opening: no rule may match text that starts with it.
const MARKER: &str = "[REDACTED:";

/// The cache of the lazy DFA that matches the rule set over every captured text. At the
/// regex crate's default (2 MB) the states the rules need over varied text do not fit: the
/// cache is cleared again and again, and the engine falls back to a slower one. Over the
/// benchmark corpus's lines the set took 23 s at 2 MB, 5.8 s at 8 MB, 3.4 s at 16 MB. The
/// cache grows only as states are built, so a hook redacting a few lines stays small.
const DFA_CACHE: usize = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub(crate) enum RedactError {
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {detail}", path.display())]
    Config { path: PathBuf, detail: String },
    #[error("the redaction key {} is damaged (expected 64 hex digits)", .0.display())]
    BadKey(PathBuf),
}

/// One compiled rule.
pub(crate) struct Rule {
    pub(crate) kind: String,
    regex: Regex,
    /// The capture group that is the secret (0: the whole match).
    group: usize,
    check: rules::Check,
    /// Where the rule comes from: a built-in format or the user's file.
    pub(crate) source: String,
}

impl Rule {
    pub(crate) fn regex(&self) -> &str {
        self.regex.as_str()
    }
}

/// One secret found in a text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Finding {
    pub(crate) kind: String,
    /// Byte range of the secret in the text.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) marker: String,
}

/// A store's redactor for whatever writes into it, loaded on the first write that needs it:
/// a store that is only opened never has a key made for it. The writer's caller hands it
/// over, so the ledger stores what it is given and knows nothing of redaction.
pub(crate) struct StoreRedactor {
    store: PathBuf,
    loaded: std::cell::OnceCell<Redactor>,
}

impl StoreRedactor {
    /// The redactor of the store at `store`, loaded when first asked for.
    pub(crate) fn new(store: &Path) -> StoreRedactor {
        StoreRedactor {
            store: store.to_path_buf(),
            loaded: std::cell::OnceCell::new(),
        }
    }

    /// Capture-time redaction off for this process ([`SWITCH_ENV`], which exists only to
    /// measure what redaction costs). No key is created for it.
    pub(crate) fn off(store: &Path) -> StoreRedactor {
        StoreRedactor {
            store: store.to_path_buf(),
            loaded: std::cell::OnceCell::from(Redactor::off()),
        }
    }

    /// The store's redactor: its key (created on first use) and its rules.
    pub(crate) fn get(&self) -> Result<&Redactor, RedactError> {
        if let Some(r) = self.loaded.get() {
            return Ok(r);
        }
        let r = Redactor::for_store(&self.store)?;
        Ok(self.loaded.get_or_init(|| r))
    }
}

/// The rules and the key of one store.
pub(crate) struct Redactor {
    rules: Vec<Rule>,
    /// Which rules may match at all: one pass over the text before any rule runs.
    any: RegexSet,
    allow: Vec<Regex>,
    key: Vec<u8>,
    on: bool,
}

impl Redactor {
    /// The redactor of the store at `store`: its key (created on first use) and the rules
    /// of its `redact.toml` (see [`config::files`]), switched on.
    pub(crate) fn for_store(store: &Path) -> Result<Redactor, RedactError> {
        let key = key::load_or_create(store)?;
        let user = config::load(&config::files(store))?;
        Redactor::new(key, user)
    }

    /// The built-in rules, then `user`'s, under `key`.
    pub(crate) fn new(key: Vec<u8>, user: config::UserRules) -> Result<Redactor, RedactError> {
        let mut rules: Vec<Rule> = rules::builtins()
            .into_iter()
            .map(|b| Rule {
                kind: b.kind.to_string(),
                // The built-in patterns are tested to compile (`every_builtin_compiles`).
                regex: Regex::new(b.pattern).unwrap_or_else(|e| panic!("{}: {e}", b.kind)),
                group: b.group,
                check: b.check,
                source: b.source.to_string(),
            })
            .collect();
        for u in user.rules {
            let group = usize::from(u.regex.captures_len() > 1);
            rules.push(Rule {
                kind: u.kind,
                regex: u.regex,
                group,
                check: rules::Check::None,
                source: u.source,
            });
        }
        let any = RegexSetBuilder::new(rules.iter().map(|r| r.regex.as_str()))
            .dfa_size_limit(DFA_CACHE)
            .build()
            .map_err(|e| RedactError::Config {
                path: PathBuf::from("redact.toml"),
                detail: format!("the rules do not combine: {e}"),
            })?;
        Ok(Redactor {
            rules,
            any,
            allow: user.allow,
            key,
            on: true,
        })
    }

    /// Whether it redacts (`PEAT_REDACT=off` switches capture-time redaction off).
    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// A redactor that changes nothing: capture-time redaction switched off
    /// (`PEAT_REDACT=off`, as the context read it).
    pub(crate) fn off() -> Redactor {
        Redactor {
            rules: Vec::new(),
            any: RegexSet::empty(),
            allow: Vec::new(),
            key: Vec::new(),
            on: false,
        }
    }

    pub(crate) fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// `text` with every secret replaced by its marker; borrowed when there was none.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.on {
            return Cow::Borrowed(text);
        }
        let hits = self.any.matches(text);
        if !hits.matched_any() {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for i in hits.iter() {
            let rule = &self.rules[i];
            let found = self.find_rule(rule, &out);
            if found.is_empty() {
                continue;
            }
            let mut s = String::with_capacity(out.len());
            let mut at = 0;
            for f in found {
                s.push_str(&out[at..f.start]);
                s.push_str(&f.marker);
                at = f.end;
            }
            s.push_str(&out[at..]);
            out = Cow::Owned(s);
        }
        out
    }

    /// Redact `text` in place; true when it changed.
    pub(crate) fn redact_string(&self, text: &mut String) -> bool {
        match self.redact(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(s) => {
                *text = s;
                true
            }
        }
    }

    /// Every secret in `text`, in order, as `redact` would replace them (without the
    /// cascade: each rule runs over the original text; overlaps keep the earlier rule's).
    pub(crate) fn findings(&self, text: &str) -> Vec<Finding> {
        let mut all: Vec<Finding> = Vec::new();
        for i in self.any.matches(text).iter() {
            for f in self.find_rule(&self.rules[i], text) {
                if !all.iter().any(|a| a.start < f.end && f.start < a.end) {
                    all.push(f);
                }
            }
        }
        all.sort_by_key(|f| f.start);
        all
    }

    fn find_rule(&self, rule: &Rule, text: &str) -> Vec<Finding> {
        let mut out = Vec::new();
        for caps in rule.regex.captures_iter(text) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            let secret = m.as_str();
            if secret.is_empty()
                || secret.contains(MARKER)
                || text[..m.start()].ends_with(MARKER)
                || !passes(rule.check, secret)
                || self.allow.iter().any(|a| a.is_match(secret))
            {
                continue;
            }
            out.push(Finding {
                kind: rule.kind.clone(),
                start: m.start(),
                end: m.end(),
                marker: self.marker(&rule.kind, secret),
            });
        }
        out
    }

    /// `[REDACTED:<kind>:<hash8>]` for `secret`.
    pub(crate) fn marker(&self, kind: &str, secret: &str) -> String {
        // HMAC accepts a key of any length: this cannot fail.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(secret.as_bytes());
        let tag = mac.finalize().into_bytes();
        format!("{MARKER}{kind}:{}]", hex::encode(&tag[..4]))
    }
}

/// Whether a candidate passes its rule's extra check.
fn passes(check: rules::Check, s: &str) -> bool {
    match check {
        rules::Check::None => true,
        rules::Check::Value => plausible_value(s),
        rules::Check::Entropy => plausible_token(s),
    }
}

/// Words and shapes that stand for a value rather than being one.
const PLACEHOLDERS: &[&str] = &[
    "string",
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "required",
    "optional",
    "bearer",
    "basic",
    "password",
    "secret",
    "token",
    "changeit",
    "redacted",
    "hidden",
];

/// A value assigned to a secret name that is not a placeholder, a reference or a type.
fn plausible_value(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    if s.len() < 4 || PLACEHOLDERS.contains(&lower.as_str()) {
        return false;
    }
    let templated = [
        "${",
        "{{",
        "<",
        "%s",
        "{}",
        "process.env",
        "os.environ",
        "example",
    ]
    .iter()
    .any(|p| lower.contains(p));
    let masked = s
        .chars()
        .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '•' | '-' | '_'));
    let your = lower.starts_with("your") || lower.starts_with("my-") || lower.starts_with("my_");
    !(templated || masked || your)
}

/// A long token that looks generated: mixed classes, high entropy, not a hash or UUID,
/// and not a dotted name (`sqlite3.OperationalError`): its longest `.`-separated part is
/// what is judged.
fn plausible_token(s: &str) -> bool {
    let s = s.trim_end_matches('=');
    let longest = s.split('.').max_by_key(|p| p.len()).unwrap_or(s);
    if s.len() < 20 || longest.len() < 16 {
        return false;
    }
    let s = if longest.len() < s.len() { longest } else { s };
    let hexish = s.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    if hexish {
        return false;
    }
    let upper = s.chars().any(|c| c.is_ascii_uppercase());
    let lower = s.chars().any(|c| c.is_ascii_lowercase());
    let digit = s.chars().any(|c| c.is_ascii_digit());
    let mixed = (upper && lower && digit) || (s.len() >= 32 && (upper || lower) && digit);
    mixed && shannon(s) >= 3.5
}

/// Bits per character of `s`'s character distribution.
fn shannon(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests;
