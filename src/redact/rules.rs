//! The built-in rule set: one recogniser per secret format people leak into transcripts.
//!
//! Where a token has a published format, the pattern follows it (the prefix and length the
//! issuer documents); the table says which. The generic rules (assignments whose name says
//! secret, high-entropy strings next to such names) follow the approach of gitleaks'
//! `generic-api-key` rule: a keyword, then a value that must also pass a check in code
//! (length, character classes, Shannon entropy), so ordinary identifiers, hashes, UUIDs and
//! base64 test data survive.
//!
//! Bump [`RULES_VERSION`] whenever a rule is added or widened: a store redacted under an
//! older version is redacted again when a writer opens it.
//!
//! Word boundaries are ASCII ones (`(?-u:\b)`): a secret written right beside a letter of
//! another script (Chinese, Japanese and Korean put no space between words) still starts
//! and ends a word. With Unicode boundaries such a secret was left in (v1), and the
//! matcher fell back to its slowest engine on any text that was not pure ASCII.

/// The version of this rule set, stored in each store once it was applied there.
/// 2: ASCII word boundaries.
pub(crate) const RULES_VERSION: u32 = 2;

/// What else a candidate must satisfy beyond its pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// The pattern is specific enough.
    None,
    /// A value after a secret-sounding name: not a placeholder, not a code expression.
    Value,
    /// A long token next to a secret-sounding name: mixed classes and high entropy, and not
    /// a hash or UUID (those are identifiers, not credentials).
    Entropy,
}

/// One built-in recogniser.
pub(crate) struct Builtin {
    /// The `<kind>` in `[REDACTED:<kind>:<hash8>]`.
    pub(crate) kind: &'static str,
    pub(crate) pattern: &'static str,
    /// Which capture group is the secret (0: the whole match).
    pub(crate) group: usize,
    pub(crate) check: Check,
    /// Where the pattern comes from (shown by `peat redact --rules`).
    pub(crate) source: &'static str,
}

/// Secret-sounding names, for the assignment and entropy rules.
macro_rules! names {
    () => {
        r"password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|signing[_-]?key|bearer"
    };
}

/// The rules, tried in this order: specific formats first, so a known token is named by its
/// kind rather than by a generic rule.
pub(crate) fn builtins() -> Vec<Builtin> {
    vec![
        Builtin {
            kind: "private-key",
            // A PEM block, also JSON-escaped (a GCP service-account file's `private_key`) or
            // cut short by a transcript cap (no END line).
            pattern: r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
            group: 0,
            check: Check::None,
            source: "PEM (RFC 7468) private key blocks, OpenSSH and PGP armour",
        },
        Builtin {
            kind: "gcp-key-id",
            pattern: r#""private_key_id"\s*:\s*"([0-9a-f]{40})""#,
            group: 1,
            check: Check::None,
            source: "GCP service-account JSON key file (private_key_id)",
        },
        Builtin {
            kind: "gcp-api-key",
            pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}(?-u:\b)",
            group: 0,
            check: Check::None,
            source: "Google API keys: AIza + 35 characters",
        },
        Builtin {
            kind: "aws-access-key",
            pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?-u:\b)",
            group: 0,
            check: Check::None,
            source: "AWS access key ids: AKIA/ASIA/ABIA/ACCA + 16 upper-case characters",
        },
        Builtin {
            kind: "aws-secret-key",
            pattern: r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?-u:\b)"#,
            group: 1,
            check: Check::None,
            source: "AWS secret access keys: 40 base64 characters after their variable name",
        },
        Builtin {
            kind: "azure-storage-key",
            pattern: r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)",
            group: 1,
            check: Check::None,
            source: "Azure storage connection strings: AccountKey (64 bytes, base64)",
        },
        Builtin {
            kind: "azure-sas",
            pattern: r"(?i)(?:SharedAccessKey=|[?&]sig=)([A-Za-z0-9%+/=]{30,})",
            group: 1,
            check: Check::None,
            source: "Azure shared access keys and SAS signatures (sig=)",
        },
        Builtin {
            kind: "azure-client-secret",
            pattern: r"(?-u:\b)[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?-u:\b)",
            group: 0,
            check: Check::None,
            source: "Microsoft Entra (Azure AD) client secrets: the Q~ marker at position 5",
        },
        Builtin {
            kind: "github-token",
            pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})(?-u:\b)",
            group: 0,
            check: Check::None,
            source: "GitHub token formats: ghp_/gho_/ghu_/ghs_/ghr_ + 36, github_pat_ + 82",
        },
        Builtin {
            kind: "gitlab-token",
            pattern: r"(?-u:\b)gl(?:pat|dt|rt|ptt|oas|cbt|imt|ft|soat|agent)-[0-9A-Za-z_.-]{20,}",
            group: 0,
            check: Check::None,
            source: "GitLab token prefixes (glpat-, gldt-, glrt-, …) + at least 20 characters",
        },
        Builtin {
            kind: "anthropic-key",
            pattern: r"(?-u:\b)sk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_-]{20,}",
            group: 0,
            check: Check::None,
            source: "Anthropic API and admin keys: sk-ant-api03-…, sk-ant-admin01-…",
        },
        Builtin {
            kind: "openai-key",
            pattern: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})(?-u:\b)",
            group: 0,
            check: Check::None,
            source: "OpenAI keys: sk-proj-/sk-svcacct-/sk-admin-, and the legacy sk- + 48 (T3BlbkFJ)",
        },
        Builtin {
            kind: "slack-token",
            pattern: r"(?-u:\b)xox[abposr]-[0-9A-Za-z-]{10,}|(?-u:\b)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+|https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}",
            group: 0,
            check: Check::None,
            source: "Slack tokens (xoxb-, xoxp-, xoxa-, xoxs-, xapp-) and incoming webhook URLs",
        },
        Builtin {
            kind: "stripe-key",
            pattern: r"(?-u:\b)(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|(?-u:\b)whsec_[0-9A-Za-z]{32,}",
            group: 0,
            check: Check::None,
            source: "Stripe secret and restricted keys (sk_/rk_ live/test) and webhook secrets",
        },
        Builtin {
            kind: "npm-token",
            pattern: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
            group: 0,
            check: Check::None,
            source: "npm access tokens: npm_ + 36",
        },
        Builtin {
            kind: "pypi-token",
            pattern: r"(?-u:\b)pypi-AgE[A-Za-z0-9_-]{50,}",
            group: 0,
            check: Check::None,
            source: "PyPI API tokens: pypi- + a macaroon starting AgE",
        },
        Builtin {
            kind: "jwt",
            pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
            group: 0,
            check: Check::None,
            source: "JSON Web Tokens (RFC 7519): base64url header and payload, both JSON objects",
        },
        Builtin {
            kind: "connection-password",
            pattern: r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@'"\[\]]+:([^\s@/'"\[\]]+)@"#,
            group: 1,
            check: Check::None,
            source: "Passwords in URLs and connection strings (RFC 3986 userinfo)",
        },
        Builtin {
            kind: "secret-assignment",
            // `DB_PASSWORD=…` (an env file, `export`, a command line).
            pattern: r#"(?-u:\b)[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH_?KEY|SIGNING_?KEY)[A-Z0-9_]*=["']?([^\s"'`$]{4,})"#,
            group: 1,
            check: Check::Value,
            source: "KEY=value assignments whose upper-case name says secret",
        },
        Builtin {
            kind: "secret-assignment",
            // `"password": "…"`, `api_key = '…'`: a quoted literal after a secret name.
            pattern: concat!(
                r#"(?i)[A-Za-z0-9_.-]*(?:"#,
                names!(),
                r#")[A-Za-z0-9_.-]*["']?\s*(?::|=|:=|=>)\s*["']([^"'\s]{4,})["']"#
            ),
            group: 1,
            check: Check::Value,
            source: "quoted values assigned to names that say secret (JSON, YAML, TOML, code)",
        },
        Builtin {
            kind: "high-entropy",
            pattern: concat!(
                r"(?i)(?:",
                names!(),
                r#")[A-Za-z0-9_.-]*[^A-Za-z0-9_+/.~\n-]{1,4}(?:(?:is|was|bearer|token|key)\s+)?([A-Za-z0-9_+/.~-][A-Za-z0-9_+/=.~-]{19,})"#
            ),
            group: 1,
            check: Check::Entropy,
            source: "high-entropy tokens (≥ 3.5 bits/char, letters and digits) right after a secret name",
        },
    ]
}
