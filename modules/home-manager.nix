# home-manager: `programs.peat`.
#
# Puts peat on PATH and, for the agents home-manager already manages, registers peat's hook
# on the four moments peat records and installs its skill, through home-manager's own
# `programs.claude-code` and `programs.codex` options. Those are lists and attribute sets
# that merge, so a user's own hooks stay beside peat's and nothing writes settings.json a
# second time. Each definition is guarded: with a home-manager that lacks one of those
# options (Codex hooks exist only since 2026-06) the module still evaluates and that agent
# is left alone.
#
# The flake imports this file with itself (`{ self }`) to default `package`.
{
  self ? null,
}:
{
  config,
  lib,
  pkgs,
  options,
  ...
}:
let
  cfg = config.programs.peat;
  inherit (lib) mkOption types;

  # The moments peat's hook runs on (src/cli/hook/mod.rs EVENTS).
  events = [
    "SessionStart"
    "Stop"
    "PreCompact"
    "SessionEnd"
  ];

  has = path: lib.hasAttrByPath path options;
  enabled = path: lib.attrByPath path false config;

  hookGroups = lib.genAttrs events (_: [
    {
      hooks = [
        {
          type = "command";
          command = cfg.hookCommand;
        }
      ];
    }
  ]);

  skillDir = "${cfg.package}/share/peat/skills/peat";

  defaultPackage =
    if self != null then
      self.packages.${pkgs.stdenv.hostPlatform.system}.default
    else
      pkgs.peat or (throw "programs.peat.package: set it (pkgs has no peat; use the flake's overlay or package)");

  agentOptions = name: option: {
    enable = mkOption {
      type = types.bool;
      default = has option && enabled option;
      defaultText = lib.literalExpression "config.${lib.concatStringsSep "." option} (when that option exists)";
      description = ''
        Register peat's hook (on ${lib.concatStringsSep ", " events}) with ${name} through
        {option}`${lib.concatStringsSep "." (lib.init option)}`.
      '';
    };
    skill = mkOption {
      type = types.bool;
      default = true;
      description = "Install peat's skill for ${name} as well (when the hooks are registered).";
    };
  };

  claudeWanted = cfg.enable && cfg.claudeCode.enable;
  codexWanted = cfg.enable && cfg.codex.enable;
in
{
  options.programs.peat = {
    enable = lib.mkEnableOption "peat, the record of what coding agents did";

    package = mkOption {
      type = types.package;
      default = defaultPackage;
      defaultText = lib.literalExpression "peat's flake package for this system";
      description = "The peat package. It carries the pinned embedding model and its skill under share/.";
    };

    store = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = "\${config.xdg.dataHome}/peat/ledger";
      description = ''
        Where the ledger lives ({env}`PEAT_DB`), for every project. `null` keeps peat's
        default: a `.peat/` store at each repository's root.
      '';
    };

    brief.budget = mkOption {
      type = types.nullOr types.ints.unsigned;
      default = null;
      example = 4;
      description = ''
        How many further-back bands the brief shows ({env}`PEAT_BRIEF_BUDGET`); `null` keeps
        peat's default.
      '';
    };

    hookCommand = mkOption {
      type = types.str;
      readOnly = true;
      description = ''
        The command the agents run. It names the profile's {file}`bin/peat`, a path that
        stays the same across upgrades (a store path would change on each, and Codex asks
        the user to trust a changed hooks.json again).
      '';
    };

    claudeCode = agentOptions "Claude Code" [
      "programs"
      "claude-code"
      "enable"
    ];
    codex = agentOptions "Codex" [
      "programs"
      "codex"
      "enable"
    ];
  };

  config = lib.mkMerge [
    {
      programs.peat.hookCommand =
        lib.optionalString (cfg.store != null) "PEAT_DB=${lib.escapeShellArg cfg.store} "
        + "${config.home.profileDirectory}/bin/peat hook";
    }

    (lib.mkIf cfg.enable {
      home.packages = [ cfg.package ];
      home.sessionVariables =
        lib.optionalAttrs (cfg.store != null) { PEAT_DB = cfg.store; }
        // lib.optionalAttrs (cfg.brief.budget != null) { PEAT_BRIEF_BUDGET = toString cfg.brief.budget; };
    })

    # A definition of an option home-manager does not have is an error even under mkIf
    # false, so each is added only when the option exists.
    (lib.optionalAttrs (has [ "programs" "claude-code" "settings" ]) {
      programs.claude-code.settings = lib.mkIf claudeWanted { hooks = hookGroups; };
    })
    (lib.optionalAttrs (has [ "programs" "claude-code" "skills" ]) {
      programs.claude-code.skills = lib.mkIf (claudeWanted && cfg.claudeCode.skill) { peat = skillDir; };
    })
    (lib.optionalAttrs (has [ "programs" "codex" "hooks" ]) {
      programs.codex.hooks = lib.mkIf codexWanted hookGroups;
    })
    (lib.optionalAttrs (has [ "programs" "codex" "skills" ]) {
      programs.codex.skills = lib.mkIf (codexWanted && cfg.codex.skill) { peat = skillDir; };
    })

    {
      warnings =
        lib.optional (claudeWanted && !has [ "programs" "claude-code" "settings" ])
          "programs.peat.claudeCode: this home-manager has no programs.claude-code.settings; run `peat hook install` in each project instead."
        ++ lib.optional (codexWanted && !has [ "programs" "codex" "hooks" ])
          "programs.peat.codex: this home-manager has no programs.codex.hooks (added 2026-06); run `peat hook install --codex` in each project instead.";
    }
  ];
}
