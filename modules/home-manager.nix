# home-manager: `programs.peat`.
#
# Puts peat on PATH and, for the agents home-manager manages, registers peat's hook on the
# four moments peat records and installs its skill. Hooks go through home-manager's own
# `programs.claude-code.settings.hooks` and `programs.codex.hooks`, which merge, so a user's
# own hooks stay beside peat's and nothing writes settings.json a second time. Each
# definition is guarded: with a home-manager that lacks one of those options (Codex hooks
# exist only since 2026-06) the module still evaluates and that agent's hooks are left alone.
#
# Claude Code's skill is linked into its skills folder with `home.file`, beside whatever
# `programs.claude-code.skills` holds: that option takes an attribute set or a path, and a
# path cannot merge with peat's entry. Codex's skills folder is private to its module, so
# peat's skill goes through `programs.codex.skills`; where a user gives that option, or
# `programs.codex.hooks`, as a path, evaluation stops with a message naming the switch that
# turns peat's part off (a module cannot see the form of an option it also defines).
#
# Copilot CLI (`programs.github-copilot-cli`) reads every `*.json` in its user-level hooks
# folder: peat's handlers go in a file of their own there (`hooks/peat.json`, Copilot's
# camelCase events, each naming its event since its payloads do not), and the skill through
# `programs.github-copilot-cli.skills`. Gemini CLI, Qwen Code, Cursor (whose module has no
# hooks) and droid have no home-manager module to go through: `peat setup --user` wires them.
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

  # Copilot CLI's names for the same moments (src/cli/hook/install.rs OTHERS).
  copilotEvents = [
    "sessionStart"
    "agentStop"
    "preCompact"
    "sessionEnd"
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

  agentOptions = name: option: moments: {
    enable = mkOption {
      type = types.bool;
      default = has option && enabled option;
      defaultText = lib.literalExpression "config.${lib.concatStringsSep "." option} (when that option exists)";
      description = "Set peat up for ${name}: its hooks and its skill, each with a switch of its own below.";
    };
    hooks = mkOption {
      type = types.bool;
      default = true;
      description = "Register peat's hook with ${name} (on ${lib.concatStringsSep ", " moments}).";
    };
    skill = mkOption {
      type = types.bool;
      default = true;
      description = "Install peat's skill in ${name}'s skills folder.";
    };
  };

  claudeWanted = cfg.enable && cfg.claudeCode.enable;
  codexWanted = cfg.enable && cfg.codex.enable;
  copilotWanted = cfg.enable && cfg.copilot.enable;

  copilotDir =
    if has [ "programs" "github-copilot-cli" "configDir" ] then
      config.programs.github-copilot-cli.configDir
    else
      "${config.home.homeDirectory}/.copilot";
  copilotHooks = {
    version = 1;
    hooks = lib.genAttrs copilotEvents (ev: [
      {
        type = "command";
        bash = "${cfg.hookCommand} --agent copilot --event ${ev}";
        timeoutSec = 30;
      }
    ]);
  };

  # Whether someone defined an option as a path (a file or folder of their own: a path, a
  # store path string or a derivation, all string-like) rather than the attribute set peat's
  # definition merges into.
  givenAsPath =
    path:
    has path
    && lib.any (d: lib.isStringLike d.value) (lib.attrByPath path { } options).definitionsWithLocations;

  # Where peat's part cannot merge with the user's: the option, and the switch that turns
  # peat's part off. Thrown from the list of assertions, which home-manager evaluates before
  # any module reads the option (whose merge would fail with a type error naming neither).
  clashes =
    lib.optional (codexWanted && cfg.codex.hooks && givenAsPath [ "programs" "codex" "hooks" ]) ''
      programs.codex.hooks is a path (a hooks.json of your own), which peat's hooks cannot be added to.
      Either give programs.codex.hooks as an attribute set of events,
      or set programs.peat.codex.hooks = false and add this command to your hooks.json
      on ${lib.concatStringsSep ", " events}: ${cfg.hookCommand}''
    ++ lib.optional (codexWanted && cfg.codex.skill && givenAsPath [ "programs" "codex" "skills" ]) ''
      programs.codex.skills is a path (a skills folder of your own), which peat's skill cannot be added to.
      Either give programs.codex.skills as an attribute set,
      or set programs.peat.codex.skill = false and link ${skillDir} into that folder as peat/.''
    ++ lib.optional (copilotWanted && cfg.copilot.skill && givenAsPath [ "programs" "github-copilot-cli" "skills" ]) ''
      programs.github-copilot-cli.skills is a path (a skills folder of your own), which peat's skill cannot be added to.
      Either give programs.github-copilot-cli.skills as an attribute set,
      or set programs.peat.copilot.skill = false and link ${skillDir} into that folder as peat/.'';

  claudeDir =
    if has [ "programs" "claude-code" "configDir" ] then config.programs.claude-code.configDir else ".claude";
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
    ] events;
    codex = agentOptions "Codex" [
      "programs"
      "codex"
      "enable"
    ] events;
    copilot = agentOptions "Copilot CLI" [
      "programs"
      "github-copilot-cli"
      "enable"
    ] copilotEvents;
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
      assertions = if clashes == [ ] then [ ] else throw (lib.concatStringsSep "\n" clashes);
    })

    (lib.mkIf (claudeWanted && cfg.claudeCode.skill) {
      home.file."${claudeDir}/skills/peat".source = skillDir;
    })

    # A definition of an option home-manager does not have is an error even under mkIf
    # false, so each is added only when the option exists.
    (lib.optionalAttrs (has [ "programs" "claude-code" "settings" ]) {
      programs.claude-code.settings = lib.mkIf (claudeWanted && cfg.claudeCode.hooks) { hooks = hookGroups; };
    })
    (lib.optionalAttrs (has [ "programs" "codex" "hooks" ]) {
      programs.codex.hooks = lib.mkIf (codexWanted && cfg.codex.hooks) hookGroups;
    })
    (lib.optionalAttrs (has [ "programs" "codex" "skills" ]) {
      programs.codex.skills = lib.mkIf (codexWanted && cfg.codex.skill) { peat = skillDir; };
    })

    (lib.mkIf (copilotWanted && cfg.copilot.hooks) {
      home.file."${copilotDir}/hooks/peat.json".text = builtins.toJSON copilotHooks;
    })
    (lib.optionalAttrs (has [ "programs" "github-copilot-cli" "skills" ]) {
      programs.github-copilot-cli.skills = lib.mkIf (copilotWanted && cfg.copilot.skill) {
        peat = skillDir;
      };
    })

    {
      warnings =
        lib.optional (claudeWanted && cfg.claudeCode.hooks && !has [ "programs" "claude-code" "settings" ])
          "programs.peat.claudeCode: this home-manager has no programs.claude-code.settings; run `peat hook install` in each project instead."
        ++ lib.optional (codexWanted && cfg.codex.hooks && !has [ "programs" "codex" "hooks" ])
          "programs.peat.codex: this home-manager has no programs.codex.hooks (added 2026-06); run `peat hook install --codex` in each project instead."
        ++ lib.optional (codexWanted && cfg.codex.skill && !has [ "programs" "codex" "skills" ])
          "programs.peat.codex.skill: this home-manager has no programs.codex.skills; `peat hook install --codex` installs the skill in each project instead.";
    }
  ];
}
