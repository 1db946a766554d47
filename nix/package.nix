# peat built with crane. The dependencies build in their own derivation (cargoArtifacts),
# which the package and every cargo check in nix/checks.nix reuse.
#
# The package bakes in PEAT_MODEL_DIR_BUILTIN: a store directory holding the pinned model,
# tokenizer and ONNX Runtime (nix/model-artifacts.nix), so the installed binary searches
# semantically with no `peat model fetch`, and `peat model status` says the files are
# "built in". Everything else (the tests' builds) is compiled without it, so tests see only
# what they install themselves.
{
  lib,
  stdenv,
  craneLib,
  callPackage,
  libiconv,
}:
let
  root = ../.;
  # crane's Cargo-and-Rust filter, plus what the crate compiles in (models.lock, the skill,
  # the brief template) and what its tests read (tests/, including tests/oracles).
  src = lib.fileset.toSource {
    inherit root;
    fileset = lib.fileset.unions [
      (craneLib.fileset.commonCargoSources root)
      ../models.lock
      ../skills
      ../src
      ../tests
    ];
  };

  commonArgs = {
    inherit src;
    strictDeps = true;
    pname = "peat";
    version = (builtins.fromTOML (builtins.readFile ../Cargo.toml)).package.version;
    buildInputs = lib.optionals stdenv.hostPlatform.isDarwin [ libiconv ];
  };

  cargoArtifacts = craneLib.buildDepsOnly commonArgs;
  modelArtifacts = callPackage ./model-artifacts.nix { };
in
craneLib.buildPackage (
  commonArgs
  // {
    inherit cargoArtifacts;
    # The suite runs in checks.tests, with the pinned model in the sandbox.
    doCheck = false;
    PEAT_MODEL_DIR_BUILTIN = "${modelArtifacts.dir}";
    postInstall = ''
      install -Dm644 skills/peat/SKILL.md $out/share/peat/skills/peat/SKILL.md
    '';
    passthru = {
      inherit
        cargoArtifacts
        commonArgs
        modelArtifacts
        src
        ;
    };
    meta = {
      description = "The record of what coding agents did: one ledger of every Claude Code and Codex session";
      license = lib.licenses.mit;
      mainProgram = "peat";
      platforms = [
        "x86_64-linux"
        "aarch64-linux"
        "aarch64-darwin"
      ];
    };
  }
)
