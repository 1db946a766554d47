# The home-manager module evaluated with nixpkgs' lib against stand-ins for the
# home-manager options it touches, for the home-managers the pinned one cannot stand for:
# older ones without Codex's options, and ones without either program. The configurations
# with the real home-manager are in tests/packaging-hm.nix. Run by checks.home-manager-module,
# so by `nix flake check` and tests/packaging.
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
    options.assertions = mkOption {
      type = types.listOf types.unspecified;
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
      file = mkOption {
        type = types.attrsOf (types.submodule { options.source = mkOption { type = types.str; }; });
        default = { };
      };
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
      mcpServers = mkOption {
        type = types.attrsOf json;
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

  commands = hooks: ev: lib.concatMap (g: map (h: h.command) g.hooks) (hooks.${ev} or [ ]);

  # A home-manager of before 2026-06: Claude Code's options, none of Codex's.
  older = eval [
    claudeCode
    {
      programs.claude-code.enable = true;
      programs.peat = {
        enable = true;
        inherit package;
        codex.enable = true;
      };
    }
  ];
  command = "/home/u/.nix-profile/bin/peat hook";
  skill = "${package}/share/peat/skills/peat";

  # A home-manager without either program's options.
  bare = eval [
    {
      programs.peat = {
        enable = true;
        inherit package;
      };
    }
  ];

  # Asked for explicitly where home-manager lacks the options: a warning each for the hooks,
  # the MCP servers and Codex's skill; Claude Code's skill needs only home.file.
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

  checks = {
    "without Codex's options: Claude Code set up, three warnings" =
      commands older.programs.claude-code.settings.hooks "Stop" == [ command ]
      && older.home.file.".claude/skills/peat".source == skill
      && older.programs.claude-code.mcpServers.peat.args == [ "mcp" ]
      && lib.length older.warnings == 3;
    "evaluates without either program" =
      bare.home.packages == [ package ] && bare.warnings == [ ] && bare.home.file == { };
    "asked for missing options: five warnings, Claude Code's skill installed" =
      lib.length bareAsked.warnings == 5 && bareAsked.home.file.".claude/skills/peat".source == skill;
  };
in
lib.mapAttrs (_: ok: if ok then "ok" else "FAILED") checks
