# The home-manager module evaluated with nixpkgs' lib against stand-ins for the
# home-manager options it touches (types as home-manager declares them: JSON settings whose
# lists concatenate, skills as an attribute set). Run by tests/packaging-module, by hand:
# the machines that run tests/run cannot fetch nixpkgs' lib.
{ lib }:
let
  module = import ../modules/home-manager.nix { };
  inherit (lib) mkOption types;

  # pkgs.formats.json's value type: attribute sets merge, lists concatenate.
  json =
    let
      valueType = types.nullOr (
        types.oneOf [
          types.bool
          types.int
          types.float
          types.str
          types.path
          (types.attrsOf valueType)
          (types.listOf valueType)
        ]
      );
    in
    types.attrsOf valueType;

  home = {
    options.warnings = mkOption {
      type = types.listOf types.str;
      default = [ ];
    };
    options.home = {
      packages = mkOption {
        type = types.listOf types.package;
        default = [ ];
      };
      sessionVariables = mkOption {
        type = types.attrsOf types.str;
        default = { };
      };
      profileDirectory = mkOption { type = types.str; };
    };
    config.home.profileDirectory = "/home/u/.nix-profile";
    config._module.args.pkgs = { };
  };
  claudeCode = {
    options.programs.claude-code = {
      enable = mkOption {
        type = types.bool;
        default = false;
      };
      settings = mkOption {
        type = json;
        default = { };
      };
      skills = mkOption {
        type = types.either (types.attrsOf (types.either types.lines types.path)) types.path;
        default = { };
      };
    };
  };
  codex = {
    options.programs.codex = {
      enable = mkOption {
        type = types.bool;
        default = false;
      };
      hooks = mkOption {
        type = types.either json types.path;
        default = { };
      };
      skills = mkOption {
        type = types.either (types.attrsOf (types.either types.lines types.path)) types.path;
        default = { };
      };
    };
  };
  package = derivation {
    name = "peat";
    system = "x86_64-linux";
    builder = "/bin/sh";
  };

  eval =
    modules:
    (lib.evalModules {
      modules = [
        module
        home
      ]
      ++ modules;
    }).config;

  events = [
    "SessionStart"
    "Stop"
    "PreCompact"
    "SessionEnd"
  ];
  commands = hooks: ev: lib.concatMap (g: map (h: h.command) g.hooks) (hooks.${ev} or [ ]);

  # Both agents, a user's own Stop hook, a store and a budget.
  full = eval [
    claudeCode
    codex
    {
      programs.claude-code.enable = true;
      programs.claude-code.settings.hooks.Stop = [
        {
          hooks = [
            {
              type = "command";
              command = "echo mine";
            }
          ];
        }
      ];
      programs.codex.enable = true;
      programs.peat = {
        enable = true;
        inherit package;
        store = "/home/u/ledger";
        brief.budget = 3;
      };
    }
  ];
  command = "PEAT_DB=/home/u/ledger /home/u/.nix-profile/bin/peat hook";
  skill = "${package}/share/peat/skills/peat";

  # Claude Code only: Codex's hooks stay untouched.
  claudeOnly = eval [
    claudeCode
    codex
    {
      programs.claude-code.enable = true;
      programs.peat = {
        enable = true;
        inherit package;
        codex.enable = false;
        claudeCode.skill = false;
      };
    }
  ];

  # A home-manager without either program's options.
  bare = eval [
    {
      programs.peat = {
        enable = true;
        inherit package;
      };
    }
  ];

  # Asked for explicitly where home-manager lacks the options: a warning, not an error.
  bareAsked = eval [
    {
      programs.peat = {
        enable = true;
        inherit package;
        claudeCode.enable = true;
        codex.enable = true;
      };
    }
  ];

  # Disabled: nothing at all.
  off = eval [
    claudeCode
    codex
    { programs.claude-code.enable = true; }
  ];

  checks = {
    "hooks on every event, both agents" = lib.all (
      ev:
      commands full.programs.claude-code.settings.hooks ev == (lib.optional (ev == "Stop") "echo mine") ++ [ command ]
      && commands full.programs.codex.hooks ev == [ command ]
    ) events;
    "the user's own hook is kept" = lib.elem "echo mine" (commands full.programs.claude-code.settings.hooks "Stop");
    "the command names the profile, not the store" =
      full.programs.peat.hookCommand == command && !lib.hasInfix builtins.storeDir command;
    "the skill in both agents" =
      full.programs.claude-code.skills == { peat = skill; } && full.programs.codex.skills == { peat = skill; };
    "PEAT_DB and PEAT_BRIEF_BUDGET" =
      full.home.sessionVariables == {
        PEAT_DB = "/home/u/ledger";
        PEAT_BRIEF_BUDGET = "3";
      };
    "the package on PATH" = full.home.packages == [ package ];
    "Claude Code only, without its skill" =
      commands claudeOnly.programs.claude-code.settings.hooks "Stop" == [ "/home/u/.nix-profile/bin/peat hook" ]
      && claudeOnly.programs.claude-code.skills == { }
      && claudeOnly.programs.codex.hooks == { }
      && claudeOnly.programs.codex.skills == { };
    "evaluates without either program" = bare.home.packages == [ package ] && bare.warnings == [ ];
    "asked for missing options: two warnings" = lib.length bareAsked.warnings == 2;
    "disabled: nothing registered" =
      off.programs.claude-code.settings == { } && off.programs.codex.hooks == { } && off.home.packages == [ ];
  };
in
lib.mapAttrs (_: ok: if ok then "ok" else "FAILED") checks
