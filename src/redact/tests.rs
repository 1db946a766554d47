use super::*;

fn redactor() -> Redactor {
    Redactor::new(vec![7; 32], config::UserRules::default()).unwrap()
}

/// Each built-in kind with texts it must redact (the secret is the part after `|`, the
/// text is the whole line with `|` removed).
const POSITIVES: &[(&str, &str)] = &[
    (
        "aws-access-key",
        "export AWS_ACCESS_KEY_ID=|AKIAZ7Q2XWJ4VHMK3PLN",
    ),
    (
        "aws-access-key",
        "creds: |ASIAY2B3C4D5E6F7G8H9 expires soon",
    ),
    // Word boundaries are ASCII ones: a letter of another script right beside a secret
    // (no space in Chinese or Japanese text) is no part of its word.
    ("aws-access-key", "密钥|AKIAZ7Q2XWJ4VHMK3PLN。"),
    ("npm-token", "토큰|npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    (
        "aws-secret-key",
        "aws_secret_access_key = |wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKY",
    ),
    (
        "private-key",
        "|-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\nq3v9\n-----END RSA PRIVATE KEY-----",
    ),
    (
        "private-key",
        r#"{"type": "service_account", "private_key": "|-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"#,
    ),
    (
        "private-key",
        "cut short: |-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9u",
    ),
    (
        "gcp-key-id",
        r#""private_key_id": "|3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39","#,
    ),
    (
        "gcp-api-key",
        "key=|AIzaSyD4x9Q-wE2rT7yU1iO3pA5sD6fG8hJ0kLz",
    ),
    (
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=|BwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRg==;EndpointSuffix=core.windows.net",
    ),
    (
        "azure-sas",
        "https://acme.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=|s9Kq2hT0xLr4mN8vB6cZ1aD3fG5jH7kP9oI2uY4tR6e%3D",
    ),
    (
        "azure-client-secret",
        "client secret |abC8Q~dEf1GhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "github-token",
        "git push https://x:|ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com",
    ),
    (
        "github-token",
        "GH token |github_pat_11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ok",
    ),
    (
        "gitlab-token",
        "use |glpat-xY7zQ2wE9rT4uI1oP6aS for the api",
    ),
    (
        "anthropic-key",
        "ANTHROPIC=|sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-Cb9Az8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7Cb6Az5Yx4Wv3Ut2Sr1Qp0-AbCdEfGh",
    ),
    (
        "openai-key",
        "client = OpenAI(api_key=os.environ) # was |sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
    ),
    (
        "openai-key",
        "old key |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",
    ),
    (
        "slack-token",
        "SLACK: |xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "slack-token",
        "curl -X POST |https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    (
        "stripe-key",
        "Stripe.api_key = '|sk_live_51H8xYzAbCdEfGhIjKlMnOpQr'",
    ),
    (
        "stripe-key",
        "webhook |whsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "npm-token",
        "//registry/:_authToken=|npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "pypi-token",
        "password = |pypi-AgEIcHlwaS5vcmcCJGE0ZjJiZjE4LTk4YjMtNDg3Zi1iZjE0LTk3ZDI3NzQxNmQ1NgACKlszLCJ",
    ),
    (
        "jwt",
        "Authorization: Bearer |eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "connection-password",
        "DATABASE_URL is postgres://app:|S3cr3tP4ss@db.internal:5432/app",
    ),
    (
        "connection-password",
        "mongodb+srv://admin:|hunter2@cluster0.example.net/test",
    ),
    ("secret-assignment", "DB_PASSWORD=|hunter22"),
    (
        "secret-assignment",
        "export STAGING_API_KEY=\"|q8w7e6r5t4y3\"",
    ),
    (
        "secret-assignment",
        r#"{"username": "deploy", "password": "|correct-horse-9"}"#,
    ),
    ("secret-assignment", "client_secret: '|Zk3_pQ9-vL2x'"),
    (
        "high-entropy",
        "the token is |Qm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2Rl",
    ),
    ("high-entropy", "X-Api-Key |7fQ2mZr9LkP4wX8bN3vT6yH1"),
];

#[test]
fn every_builtin_compiles() {
    for b in rules::builtins() {
        Regex::new(b.pattern).unwrap_or_else(|e| panic!("{}: {e}", b.kind));
    }
}

#[test]
fn every_recogniser_redacts_its_format() {
    let r = redactor();
    let mut failed = Vec::new();
    for (kind, case) in POSITIVES {
        let (before, secret) = case.split_once('|').unwrap();
        let text = format!("{before}{secret}");
        let found = r.findings(&text);
        let out = r.redact(&text);
        // The secret's first 12 characters (in no marker) are gone, and the marker names
        // the kind.
        let core = &secret[..secret.len().min(12)];
        if !found.iter().any(|f| f.kind == *kind)
            || out.contains(core)
            || !out.contains(&format!("[REDACTED:{kind}:"))
        {
            failed.push(format!("{kind}: {text:?} → {out:?} {found:?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Every built-in kind is exercised above.
#[test]
fn every_builtin_kind_has_a_positive_case() {
    for b in rules::builtins() {
        assert!(
            POSITIVES.iter().any(|(k, _)| *k == b.kind),
            "{} has no positive case",
            b.kind
        );
    }
}

/// Texts that look like secrets to a careless rule and must survive untouched.
const NEGATIVES: &[&str] = &[
    // Hashes, ids and test data.
    "commit 3f6c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "session 2d984148-5a3e-4d7c-9b1f-0e6a7c8d9f01 started",
    "token 4be1c0a9f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8 is the tree hash",
    "base64 fixture: SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBmaXh0dXJlLg==",
    "let data = \"dGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==\";",
    "md5 9e107d9d372bb6826bd81d3542a419d6 ok",
    // Ordinary code and prose about secrets.
    "let token = lexer.next_token()?;",
    "fn verify_password(password: &str) -> bool {",
    "const MAX_TOKENS: usize = 4096;",
    "the tokenizer splits on whitespace; see src/auth/token_refresh.rs",
    "password: ${DB_PASSWORD}",
    "API_KEY=$API_KEY",
    "\"api_key\": \"<your-api-key>\"",
    "\"password\": \"string\"",
    "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "set the SECRET_KEY in .env, never in code",
    "pk_live_51H8xYzAbCdEfGhIjKlMnOpQr is a publishable key",
    "visit https://docs.example.com:8443/guide for more",
    "git clone git@github.com:acme/api.git",
    "AKIAIOSFODNN7 is too short to be a key",
    "eyJhbGciOiJIUzI1NiJ9 alone is a header, not a token",
    "sk-learn and sk-image are python packages",
    "the secret sauce is in src/server.ts:42",
    "Bearer token auth is configured in middleware/auth.ts",
    "password_hash = bcrypt(\"x\")",
    // Seen in generated sessions: a log line's module path before an exception name.
    "2026-07-14T09:43:34Z ERROR query::token: sqlite3.OperationalError: database is locked",
];

#[test]
fn ordinary_text_survives() {
    let r = redactor();
    for text in NEGATIVES {
        assert_eq!(r.redact(text), *text, "{:?}", r.findings(text));
    }
}

#[test]
fn redacting_twice_changes_nothing() {
    let r = redactor();
    for (_, case) in POSITIVES {
        let text = case.replace('|', "");
        let once = r.redact(&text).into_owned();
        let twice = r.redact(&once).into_owned();
        assert_eq!(once, twice, "{text}");
    }
}

#[test]
fn equal_secrets_share_a_marker_and_the_key_decides_it() {
    let r = redactor();
    let a = r
        .redact("k1 AKIAZ7Q2XWJ4VHMK3PLN and again AKIAZ7Q2XWJ4VHMK3PLN, not AKIAZ7Q2XWJ4VHMK3PLM");
    let markers: Vec<&str> = a
        .split_whitespace()
        .filter(|w| w.starts_with("[REDACTED"))
        .collect();
    assert_eq!(markers.len(), 3, "{a}");
    assert_eq!(markers[0], markers[1].trim_end_matches(','));
    assert_ne!(markers[0], markers[2]);
    let other = Redactor::new(vec![8; 32], config::UserRules::default()).unwrap();
    assert_ne!(
        r.marker("aws-access-key", "AKIAZ7Q2XWJ4VHMK3PLN"),
        other.marker("aws-access-key", "AKIAZ7Q2XWJ4VHMK3PLN")
    );
    let m = r.marker("aws-access-key", "AKIAZ7Q2XWJ4VHMK3PLN");
    assert!(
        m.starts_with("[REDACTED:aws-access-key:")
            && m.len() == "[REDACTED:aws-access-key:]".len() + 8
    );
}

#[test]
fn user_rules_add_kinds_and_the_allow_list_wins() {
    let user = config::parse(
        Path::new("redact.toml"),
        r#"
allow = ["^AKIAZ7Q2XWJ4VHMK3PLN$"]
[[rule]]
kind = "acme-license"
regex = "ACME-([0-9A-F]{24})"
"#,
    )
    .unwrap();
    let r = Redactor::new(vec![1; 32], user).unwrap();
    let out = r.redact("lic ACME-0123456789ABCDEF01234567 key AKIAZ7Q2XWJ4VHMK3PLN");
    assert!(out.starts_with("lic ACME-[REDACTED:acme-license:"), "{out}");
    assert!(out.ends_with("key AKIAZ7Q2XWJ4VHMK3PLN"), "{out}");
}

#[test]
fn a_bad_rules_file_names_the_file_and_the_rule() {
    let bad = [
        (
            "[[rule]]\nkind = \"x\"\nregex = \"(\"",
            "rule 1 (x): not a regex",
        ),
        (
            "[[rule]]\nkind = \"Bad Kind\"\nregex = \"a\"",
            "must be 1-40 characters",
        ),
        (
            "[[rule]]\nkind = \"e\"\nregex = \"a*\"",
            "matches the empty string",
        ),
        ("allow = [\"[\"]", "allow[0] is not a regex"),
        ("rules = 1", "expected `allow"),
    ];
    for (text, want) in bad {
        let e = config::parse(Path::new("/p/redact.toml"), text)
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(msg.starts_with("/p/redact.toml: "), "{msg}");
        assert!(msg.contains(want), "{msg} lacks {want}");
    }
}

#[test]
fn switched_off_it_changes_nothing() {
    let mut r = redactor();
    r.on = false;
    assert_eq!(r.redact("AKIAZ7Q2XWJ4VHMK3PLN"), "AKIAZ7Q2XWJ4VHMK3PLN");
}

/// A deterministic stream of ids, hashes and test data, in the contexts transcripts show
/// them: none is a secret, and none may be redacted.
#[test]
fn generated_hashes_uuids_and_base64_survive() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut pick = |alphabet: &[u8], n: usize| -> String {
        (0..n)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
            .collect()
    };
    const HEX: &[u8] = b"0123456789abcdef";
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let r = redactor();
    let mut texts = Vec::new();
    for _ in 0..500 {
        let sha = pick(HEX, 40);
        let sha256 = pick(HEX, 64);
        let uuid = format!(
            "{}-{}-4{}-a{}-{}",
            pick(HEX, 8),
            pick(HEX, 4),
            pick(HEX, 3),
            pick(HEX, 3),
            pick(HEX, 12)
        );
        let len = 4 * (4 + pick(HEX, 1).len() * (sha.as_bytes()[0] as usize % 20));
        let b64 = pick(B64, len);
        texts.push(format!("commit {sha}\nAuthor: dev\n\n    fix the limiter"));
        texts.push(format!("[main {}] add the token bucket", &sha[..7]));
        texts.push(format!("sha256:{sha256}  target/release/peat"));
        texts.push(format!(
            "session {uuid} resumed; request id req_{}",
            &sha[..12]
        ));
        texts.push(format!("let fixture = \"{b64}\"; // base64 test data"));
        texts.push(format!(
            "{{\"id\": \"{uuid}\", \"blob\": \"{b64}\", \"etag\": \"{sha}\"}}"
        ));
        texts.push(format!("integrity sha512-{b64}=="));
        texts.push(format!("cache key {sha256} for token counts"));
    }
    let hits: Vec<(String, Vec<Finding>)> = texts
        .iter()
        .map(|t| (t.clone(), r.findings(t)))
        .filter(|(_, f)| !f.is_empty())
        .collect();
    assert!(
        hits.is_empty(),
        "{} of {} ordinary texts redacted, e.g. {:?}",
        hits.len(),
        texts.len(),
        hits.first()
    );
}

#[test]
fn the_file_a_write_replaced_is_redacted_with_what_it_wrote() {
    use crate::vocab::change::{Before, Change};
    let r = redactor();
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\nq3v9\n-----END RSA PRIVATE KEY-----\n";
    let was = format!("id = AKIAZ7Q2XWJ4VHMK3PLN\n{key}kept\n");
    let content = "id = env\nkept\n";
    let change = Change::Write {
        content: content.into(),
        before: Some(Before::between(&was, content)),
    };
    let (_, red) = apply::blob(&r, &change.to_blob().1).expect("the blob held secrets");
    let text = String::from_utf8(red.clone()).unwrap();
    assert!(
        !text.contains("AKIAZ7Q2") && !text.contains("MIIEpAIBAAKCAQEA7bq"),
        "{text}"
    );
    let Change::Write {
        content,
        before: Some(before),
    } = serde_json::from_slice(&red).unwrap()
    else {
        panic!("{text}")
    };
    let was = before.text(&content).unwrap();
    assert!(was.starts_with("id = [REDACTED:aws-access-key:"), "{was}");
    assert!(
        was.contains("[REDACTED:private-key:") && was.ends_with("kept\n"),
        "{was}"
    );
}

/// A text a revision replaced before the redaction ran was embedded while it was current:
/// the redaction forgets its cached vector too, not only those of the texts current then.
#[test]
fn a_redaction_forgets_the_vectors_of_replaced_texts_too() {
    use crate::ledger::{Access, Ledger, Mode, WriteSet};
    use crate::views::{ModelSlot, Views};
    use crate::vocab::event::{Envelope, Event, Seq, SessionId};
    let dir = tempfile::tempdir().unwrap();
    let access = Access {
        mode: Mode::Create,
        wait: std::time::Duration::from_secs(5),
        who: "test",
        on_wait: &mut || {},
    };
    let mut ledger = Ledger::open(dir.path(), access).unwrap();
    let write = |ledger: &mut Ledger, text: &str| {
        let closing = Event::FinalMsg { text: text.into() };
        let mut set = WriteSet::default();
        set.event(Seq(16), Envelope::new(SessionId("s".into()), 1000, closing));
        ledger.write(set).unwrap();
    };
    let slot = || ModelSlot::with(Box::new(crate::embed::hash::HashEmbedder::new()));
    let open = |ledger: &Ledger| {
        Views::open(ledger, &mut slot(), jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap()
    };
    let secret = "the key is AKIAZ7Q2XWJ4VHMK3PLN so do not share it";
    write(&mut ledger, secret);
    drop(open(&ledger));
    write(&mut ledger, "nothing secret in this closing message at all");
    drop(open(&ledger));
    let mut model = slot();
    let tz = jiff::tz::TimeZone::UTC;
    retro::run(&mut ledger, &redactor(), &mut model, tz, &mut |_| {}).unwrap();
    let views = open(&ledger);
    let id = views.model().unwrap().to_string();
    assert_eq!(
        views.vectors.forget(&id, [secret]).unwrap(),
        0,
        "the cache kept the vector of the replaced text"
    );
}
