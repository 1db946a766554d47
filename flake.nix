{
  description = "peat: the record of what coding agents did";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    # crane's flake has no inputs of its own: nothing to follow.
    crane.url = "github:ipetkov/crane";
    # Only checks.home-manager uses it (homeManagerConfiguration); users bring their own.
    home-manager = {
      url = "github:nix-community/home-manager";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      crane,
      home-manager,
    }:
    let
      inherit (nixpkgs) lib;
      # The release targets; models.lock pins an ONNX Runtime for each (nix/models.nix).
      systems = (import ./nix/models.nix { }).systems;
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
      craneFor = pkgs: crane.mkLib pkgs;
      peatFor = pkgs: pkgs.callPackage ./nix/package.nix { craneLib = craneFor pkgs; };
      homeModule = import ./modules/home-manager.nix { inherit self; };
    in
    {
      packages = forAllSystems (pkgs: {
        default = peatFor pkgs;
        peat = self.packages.${pkgs.stdenv.hostPlatform.system}.default;
        model = self.packages.${pkgs.stdenv.hostPlatform.system}.default.passthru.modelArtifacts.dir;
      });

      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = lib.getExe self.packages.${pkgs.stdenv.hostPlatform.system}.default;
          meta.description = "peat, with the pinned embedding model built in";
        };
      });

      # An attribute set of shells per system: `nix develop` enters `default`.
      devShells = forAllSystems (pkgs: {
        default = (craneFor pkgs).devShell {
          checks = self.checks.${pkgs.stdenv.hostPlatform.system};
          packages = [
            pkgs.git
            pkgs.jq
            pkgs.shellcheck
            pkgs.python3
          ];
        };
      });

      formatter = forAllSystems (pkgs: pkgs.nixfmt);

      overlays.default = final: _prev: { peat = peatFor final; };

      homeModules = {
        default = homeModule;
        peat = homeModule;
      };
      # The older output name, still read by many configurations.
      homeManagerModules = self.homeModules;

      checks = forAllSystems (
        pkgs:
        import ./nix/checks.nix {
          inherit lib pkgs homeModule;
          inherit (pkgs)
            runCommand
            git
            jq
            jujutsu
            ;
          craneLib = craneFor pkgs;
          peat = self.packages.${pkgs.stdenv.hostPlatform.system}.default;
          inherit (home-manager.lib) homeManagerConfiguration;
        }
      );
    };
}
