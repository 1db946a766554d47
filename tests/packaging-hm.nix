# The home-manager module in real configurations: home-manager's own homeManagerConfiguration
# (the pinned rev), with whatever package set the flake is given. For each case, what lands
# where the agents read it (Claude Code's settings hooks, Codex's hooks, both skills folders,
# the session variables) and the expectations it failed (none, when the module is right).
#
# checks.home-manager asserts that no case failed, so `nix flake check` evaluates them all;
# tests/packaging reads `landed` back with `nix eval` and evaluates `refused`, the cases that
# must stop with a message naming the switch to set.
{
  lib,
  pkgs,
  homeManagerConfiguration,
  homeModule,
  peat,
}:
let
  events = [
    "SessionStart"
    "Stop"
    "PreCompact"
    "SessionEnd"
  ];
  copilotEvents = [
    "sessionStart"
    "agentStop"
    "preCompact"
    "sessionEnd"
  ];
  home = "/home/peat-check";
  profile = "${home}/.nix-profile";
  plain = "${profile}/bin/peat hook";
  withStore = "PEAT_DB=${lib.escapeShellArg "${home}/ledger"} ${profile}/bin/peat hook";
  skill = "${peat}/share/peat/skills/peat";

  mine = [
    {
      hooks = [
        {
          type = "command";
          command = "echo mine";
        }
      ];
    }
  ];

  configure =
    extra:
    homeManagerConfiguration {
      inherit pkgs;
      modules = [
        homeModule
        {
          home.username = "peat-check";
          home.homeDirectory = home;
          home.stateVersion = "25.11";
          programs.claude-code = {
            enable = true;
            package = null;
          };
          programs.codex = {
            enable = true;
            package = null;
          };
          programs.peat = {
            # A default, so that a case can switch peat off.
            enable = lib.mkDefault true;
            package = peat;
          };
        }
        extra
      ];
    };

  # What the agents will read, from the configuration home-manager built.
  read =
    hm:
    let
      c = hm.config;
      files = lib.mapAttrs' (_: f: lib.nameValuePair f.target f) c.home.file;
      under = dir: lib.sort lib.lessThan (lib.filter (t: lib.hasPrefix dir t) (lib.attrNames files));
      commands =
        hooks: lib.mapAttrs (_: groups: lib.concatMap (g: map (h: h.command) g.hooks) groups) hooks;
    in
    {
      claudeHooks = commands (c.programs.claude-code.settings.hooks or { });
      claudeSettingsFile = files ? ".claude/settings.json";
      codexHooks = if builtins.isAttrs c.programs.codex.hooks then commands c.programs.codex.hooks else "path";
      codexHooksFile = if files ? ".codex/hooks.json" then toString files.".codex/hooks.json".source else null;
      claudeSkills = under ".claude/skills";
      claudePeatSkill = if files ? ".claude/skills/peat" then toString files.".claude/skills/peat".source else null;
      codexSkills = under ".codex/skills";
      codexPeatSkill = if builtins.isAttrs c.programs.codex.skills then c.programs.codex.skills.peat or null else null;
      sessionVariables = lib.filterAttrs (n: _: lib.hasPrefix "PEAT_" n) c.home.sessionVariables;
      # Copilot CLI's user-level hooks file of peat's own, as JSON; null when none.
      copilotHooks =
        let
          at = lib.findFirst (t: lib.hasSuffix ".copilot/hooks/peat.json" t) null (lib.attrNames files);
        in
        if at == null then null else builtins.fromJSON files.${at}.text;
      copilotPeatSkill =
        if builtins.isAttrs (c.programs.github-copilot-cli.skills or null) then
          c.programs.github-copilot-cli.skills.peat or null
        else
          null;
      # Forces the whole configuration, as a switch would.
      activation = hm.activationPackage.drvPath;
    };

  # The expectations common to every case, and each case's own.
  peatEverywhere =
    cmd: got:
    lib.concatMap (
      ev:
      lib.optional (!lib.elem cmd (got.claudeHooks.${ev} or [ ])) "Claude Code's ${ev} lacks `${cmd}`"
      ++ lib.optional (builtins.isAttrs got.codexHooks && !lib.elem cmd (got.codexHooks.${ev} or [ ]))
        "Codex's ${ev} lacks `${cmd}`"
    ) events;
  expect = cond: what: lib.optional (!cond) what;
  skillsEverywhere =
    got:
    expect (got.claudePeatSkill == skill) "the skill is not in Claude Code's skills folder (${toString got.claudePeatSkill})"
    ++ expect (got.codexPeatSkill == skill) "the skill is not in Codex's skills folder"
    ++ expect (lib.elem ".codex/skills/peat" got.codexSkills) "no .codex/skills/peat is written";

  cases = {
    "peat alone" = {
      config = { };
      check =
        got:
        peatEverywhere plain got
        ++ skillsEverywhere got
        ++ expect (got.claudeHooks.Stop == [ plain ]) "Claude Code's Stop holds more than peat's hook"
        ++ expect (got.codexHooksFile != null) "no .codex/hooks.json is written"
        ++ expect (got.copilotHooks == null) "Copilot CLI's hooks are written where home-manager does not manage it"
        ++ expect got.claudeSettingsFile "no .claude/settings.json is written"
        ++ expect (got.sessionVariables == { }) "session variables set without store or budget";
    };

    "beside the user's own hooks, with store and brief.budget" = {
      config = {
        programs.claude-code.settings.hooks.Stop = mine;
        programs.codex.hooks.Stop = mine;
        programs.codex.hooks.SessionStart = mine;
        programs.peat.store = "${home}/ledger";
        programs.peat.brief.budget = 3;
      };
      check =
        got:
        peatEverywhere withStore got
        ++ skillsEverywhere got
        ++ expect (got.claudeHooks.Stop == [
          "echo mine"
          withStore
        ]) "Claude Code's Stop is not the user's hook then peat's: ${toString got.claudeHooks.Stop}"
        ++ expect (
          got.codexHooks.Stop == [
            "echo mine"
            withStore
          ]
          && got.codexHooks.SessionStart == [
            "echo mine"
            withStore
          ]
        ) "Codex's Stop and SessionStart do not keep the user's hook beside peat's"
        ++ expect (got.sessionVariables == {
          PEAT_DB = "${home}/ledger";
          PEAT_BRIEF_BUDGET = "3";
        }) "session variables: ${builtins.toJSON got.sessionVariables}";
    };

    "Claude Code's skills given as a path" = {
      config.programs.claude-code.skills = ./fixtures/home-manager/skills;
      check =
        got:
        peatEverywhere plain got
        ++ skillsEverywhere got
        ++ expect (lib.elem ".claude/skills" got.claudeSkills) "the user's skills folder is not linked: ${toString got.claudeSkills}";
    };

    "Claude Code's skills as an attribute set" = {
      config.programs.claude-code.skills.mine = ./fixtures/home-manager/skills/mine;
      check =
        got:
        skillsEverywhere got
        ++ expect (lib.elem ".claude/skills/mine" got.claudeSkills) "the user's skill is not linked: ${toString got.claudeSkills}";
    };

    "Codex's hooks given as a path, peat's hooks switched off" = {
      config = {
        programs.codex.hooks = ./fixtures/home-manager/hooks.json;
        programs.peat.codex.hooks = false;
      };
      check =
        got:
        skillsEverywhere got
        ++ expect (got.codexHooks == "path") "Codex's hooks are not the user's file"
        ++ expect (lib.hasSuffix "/home-manager/hooks.json" (toString got.codexHooksFile)) "hooks.json is not the user's file: ${toString got.codexHooksFile}"
        ++ expect (got.claudeHooks.Stop == [ plain ]) "Claude Code lost peat's hook";
    };

    "Codex's skills given as a path, peat's skill switched off" = {
      config = {
        programs.codex.skills = ./fixtures/home-manager/skills;
        programs.peat.codex.skill = false;
      };
      check =
        got:
        peatEverywhere plain got
        ++ expect (got.codexPeatSkill == null) "peat's skill was added to a path"
        ++ expect (got.claudePeatSkill == skill) "Claude Code lost peat's skill"
        ++ expect (lib.elem ".codex/skills/mine" got.codexSkills) "the user's Codex skill is not linked: ${toString got.codexSkills}";
    };

    "hooks and skill switched separately" = {
      config.programs.peat = {
        claudeCode.hooks = false;
        codex.skill = false;
      };
      check =
        got:
        expect (got.claudeHooks == { }) "Claude Code got hooks with claudeCode.hooks = false"
        ++ expect (got.claudePeatSkill == skill) "Claude Code's skill went with its hooks"
        ++ expect (got.codexPeatSkill == null && !lib.elem ".codex/skills/peat" got.codexSkills)
          "Codex got the skill with codex.skill = false"
        ++ expect (got.codexHooks.Stop or [ ] == [ plain ]) "Codex lost its hooks with codex.skill = false";
    };

    "Copilot CLI, where home-manager manages it" = {
      config.programs.github-copilot-cli = {
        enable = true;
        package = null;
      };
      check =
        got:
        peatEverywhere plain got
        ++ expect (got.copilotHooks != null && got.copilotHooks.version == 1) "no Copilot CLI hooks/peat.json of version 1"
        ++ lib.concatMap (
          ev:
          expect (
            got.copilotHooks != null
            && got.copilotHooks.hooks.${ev} or null == [
              {
                type = "command";
                bash = "${plain} --agent copilot --event ${ev}";
                timeoutSec = 30;
              }
            ]
          ) "Copilot CLI's ${ev} does not run peat's hook for that event"
        ) copilotEvents
        ++ expect (got.copilotPeatSkill == skill) "the skill is not in Copilot CLI's skills";
    };

    "Claude Code off" = {
      config.programs.peat.claudeCode.enable = false;
      check =
        got:
        expect (got.claudeHooks == { } && got.claudePeatSkill == null) "Claude Code was set up while switched off"
        ++ expect (got.codexPeatSkill == skill) "Codex lost its skill";
    };

    "peat disabled" = {
      config.programs.peat.enable = false;
      check =
        got:
        expect (
          got.claudeHooks == { }
          && got.codexHooks == { }
          && got.claudePeatSkill == null
          && got.codexPeatSkill == null
          && got.sessionVariables == { }
        ) "something was set up with programs.peat.enable = false";
    };
  };
in
{
  landed = lib.mapAttrs (
    _: case:
    let
      got = read (configure case.config);
    in
    got // { failed = case.check got; }
  ) cases;

  # Each must stop evaluation with a message naming the switch that turns peat's part off.
  refused = {
    "programs.peat.codex.hooks" =
      (read (configure { programs.codex.hooks = ./fixtures/home-manager/hooks.json; })).activation;
    "programs.peat.codex.skill" =
      (read (configure { programs.codex.skills = ./fixtures/home-manager/skills; })).activation;
  };
}
