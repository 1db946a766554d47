#!/bin/sh
# Install peat from a release: the binary, and the pinned embedding model and ONNX Runtime so
# semantic search works with no Python.
#
#   curl -fsSL <release>/install.sh | sh
#
# Nothing is installed unless the release tarball matches its published sha256 and every
# model file matches the release's models.lock. Environment:
#   PEAT_INSTALL_DIR    where the binary goes (default ~/.local/bin)
#   PEAT_DATA_DIR       peat's data directory (default $XDG_DATA_HOME/peat or ~/.local/share/peat)
#   PEAT_DOWNLOAD_BASE  where the release files are (a mirror, a test server)
set -eu

# The release workflow writes the release's address and repository here; a copy from the
# repository has neither.
DEFAULT_BASE='@PEAT_DOWNLOAD_BASE@'
REPO='@PEAT_REPO@'
case "$REPO" in
  @*@)
    CARGO_ROUTE='cargo install --locked --path .   (in a clone of peat)'
    NIX_ROUTE='nix profile install .   (in a clone of peat)'
    ;;
  *)
    CARGO_ROUTE="cargo install --locked --git https://github.com/$REPO peat"
    NIX_ROUTE="nix profile install github:$REPO"
    ;;
esac

say() { printf '%s\n' "$*"; }
die() {
  printf 'peat-install: %s\n' "$1" >&2
  shift
  for line in "$@"; do printf '  %s\n' "$line" >&2; done
  exit 1
}

# The release target for this machine, in peat's own names (models.lock `platform`).
detect_target() {
  os=$(uname -s)
  arch=$(uname -m)
  case "$os/$arch" in
    Linux/x86_64 | Linux/amd64) target=x86_64-linux ;;
    Linux/aarch64 | Linux/arm64) target=aarch64-linux ;;
    Darwin/arm64 | Darwin/aarch64) target=aarch64-macos ;;
    *)
      die "peat has no prebuilt binary for $os $arch (releases cover Linux x86_64 and aarch64 with glibc 2.28 or newer, and macOS on Apple silicon). Nothing was installed." \
        "Build it with cargo: $CARGO_ROUTE" \
        "or with Nix:         $NIX_ROUTE"
      ;;
  esac
  if [ "$os" = Linux ] && (ldd --version 2>&1 || true) | grep -qi musl; then
    die "this Linux uses musl; peat's release binaries and ONNX Runtime need glibc 2.28 or newer. Nothing was installed." \
      "Build it with cargo: $CARGO_ROUTE" \
      "or with Nix:         $NIX_ROUTE"
  fi
}

# sha256 of a file, with whichever tool this machine has.
pick_hasher() {
  if command -v sha256sum >/dev/null 2>&1; then
    hasher=sha256sum
  elif command -v shasum >/dev/null 2>&1; then
    hasher='shasum -a 256'
  elif command -v openssl >/dev/null 2>&1; then
    hasher=openssl
  else
    die "no sha256 tool (sha256sum, shasum or openssl) to verify the download with; nothing was installed." \
      "Install one of them (coreutils, perl or openssl) and run this again."
  fi
}

sha256_of() {
  case "$hasher" in
    openssl) openssl dgst -sha256 -r "$1" | cut -d' ' -f1 ;;
    *) $hasher "$1" | cut -d' ' -f1 ;;
  esac
}

pick_fetcher() {
  if command -v curl >/dev/null 2>&1; then
    fetcher=curl
  elif command -v wget >/dev/null 2>&1; then
    fetcher=wget
  else
    die "neither curl nor wget is installed; nothing was installed."
  fi
}

fetch() {
  case "$fetcher" in
    curl) curl --proto '=https,http' -fsSL --retry 2 -o "$2" "$1" ;;
    wget) wget -q -O "$2" "$1" ;;
  esac || die "could not download $1; nothing was installed." \
    "Check the network, or set PEAT_DOWNLOAD_BASE to a mirror of the release."
}

# "platform name sha256" for every artifact models.lock pins (its top-level keys only, not
# those of [artifact.source]).
lock_artifacts() {
  awk '
    function flush() { if (name != "") print platform, name, sha; name = ""; platform = ""; sha = "" }
    /^\[\[artifact\]\]/ { flush(); in_artifact = 1; next }
    /^\[/ { in_artifact = 0; next }
    in_artifact && /^name *=/ { name = $0; sub(/^[^"]*"/, "", name); sub(/".*$/, "", name) }
    in_artifact && /^platform *=/ { platform = $0; sub(/^[^"]*"/, "", platform); sub(/".*$/, "", platform) }
    in_artifact && /^sha256 *=/ { sha = $0; sub(/^[^"]*"/, "", sha); sub(/".*$/, "", sha) }
    END { flush() }
  ' "$1"
}

lock_model_id() {
  awk '/^\[model\]/ { m = 1; next } /^\[/ { m = 0 } m && /^id *=/ { v = $0; sub(/^[^"]*"/, "", v); sub(/".*$/, "", v); print v; exit }' "$1"
}

# Copy beside the target, then rename over it: a reader never sees half a file.
install_file() {
  src=$1 dest=$2 mode=$3
  tmp_dest="$(dirname "$dest")/.$(basename "$dest").peat-install.$$"
  cp "$src" "$tmp_dest"
  chmod "$mode" "$tmp_dest"
  mv -f "$tmp_dest" "$dest"
}

main() {
  base=${PEAT_DOWNLOAD_BASE:-$DEFAULT_BASE}
  case "$base" in
    @*@ | '') die "this copy of install.sh is not from a release, so it does not know where the release is; nothing was installed." \
      "Use the install.sh attached to a release, or set PEAT_DOWNLOAD_BASE to the release's download address." ;;
  esac
  home=${HOME:?HOME is not set}
  bindir=${PEAT_INSTALL_DIR:-$home/.local/bin}
  case "${XDG_DATA_HOME:-}" in
    /*) xdg_data=$XDG_DATA_HOME ;;
    *) xdg_data=$home/.local/share ;;
  esac
  datadir=${PEAT_DATA_DIR:-$xdg_data/peat}

  detect_target
  pick_hasher
  pick_fetcher

  tarball="peat-$target.tar.gz"
  work=$(mktemp -d 2>/dev/null || mktemp -d -t peat-install)
  trap 'rm -rf "$work"' EXIT
  trap 'rm -rf "$work"; exit 1' INT TERM HUP

  say "peat-install: downloading $tarball from $base"
  fetch "$base/SHA256SUMS" "$work/SHA256SUMS"
  fetch "$base/$tarball" "$work/$tarball"

  expected=$(awk -v f="$tarball" '$2 == f || $2 == "*" f { print $1; exit }' "$work/SHA256SUMS")
  [ -n "$expected" ] || die "SHA256SUMS lists no $tarball; nothing was installed."
  actual=$(sha256_of "$work/$tarball")
  [ "$actual" = "$expected" ] || die "checksum mismatch for $tarball: got $actual, SHA256SUMS says $expected; nothing was installed." \
    "The download is corrupt or was altered. Try again; if it persists, report it."
  say "peat-install: $tarball: sha256 verified"

  mkdir "$work/x"
  tar -xzf "$work/$tarball" -C "$work/x"
  root="$work/x/peat-$target"
  if [ ! -x "$root/bin/peat" ] || [ ! -f "$root/models.lock" ]; then
    die "$tarball does not hold bin/peat and models.lock; nothing was installed."
  fi

  # Every model file this platform needs, checked against the release's models.lock.
  id=$(lock_model_id "$root/models.lock")
  [ -n "$id" ] || die "the release's models.lock names no model; nothing was installed."
  models="$root/share/peat/models/$id"
  files=""
  lock_artifacts "$root/models.lock" >"$work/pins"
  while read -r platform name sha; do
    [ "$platform" = any ] || [ "$platform" = "$target" ] || continue
    [ -f "$models/$name" ] || die "$tarball lacks the model file $name; nothing was installed."
    got=$(sha256_of "$models/$name")
    [ "$got" = "$sha" ] || die "$name in $tarball does not match models.lock (sha256 $got, expected $sha); nothing was installed."
    files="$files $name"
  done <"$work/pins"
  [ -n "$files" ] || die "models.lock pins nothing for $target; nothing was installed."

  mkdir -p "$bindir" "$datadir/models/$id"
  for name in $files; do
    install_file "$models/$name" "$datadir/models/$id/$name" 644
  done
  install_file "$root/bin/peat" "$bindir/peat" 755

  say "peat-install: installed $("$bindir/peat" --version 2>/dev/null || echo peat) at $bindir/peat"
  say "peat-install: installed the pinned model ($id:$files) in $datadir/models/$id"
  case ":${PATH:-}:" in
    *":$bindir:"*) ;;
    *) say "peat-install: $bindir is not on PATH; add it, e.g.: export PATH=\"$bindir:\$PATH\"" ;;
  esac
  say ""
  say "Next, in each project: peat setup"
}

main "$@"
