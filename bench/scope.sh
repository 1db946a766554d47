#!/usr/bin/env bash
# What a read's scope costs: the same reads of one user-level ledger, scoped to the
# repository they run in (the default there) and lifted with --all-projects, and one agent's
# sessions (--agent). Prints the median and p90 of each as `name: value` lines and the
# scoped/unscoped ratios; progress goes to stderr. See bench/README.md.
#
# usage: bench/scope.sh
# Knobs (environment): BENCH_RUNS (15), BENCH_SESSIONS (200), BENCH_EVENTS (300),
# BENCH_DAYS (120), BENCH_SEED (7), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

RUNS=${BENCH_RUNS:-15}
SESSIONS=${BENCH_SESSIONS:-200}
EVENTS=${BENCH_EVENTS:-300}
DAYS=${BENCH_DAYS:-120}
SEED=${BENCH_SEED:-7}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
build_release
bench_tmp scope

log "generating $SESSIONS sessions x ~$EVENTS events over $DAYS days (seed $SEED)"
"$SYNTH" --out "$TMP/home" --sessions "$SESSIONS" --events-per-session "$EVENTS" \
    --days "$DAYS" --seed "$SEED" 2>"$TMP/synth.err"
out corpus "$(cat "$TMP/synth.err")"

# The transcripts say they ran in /home/dev/<project>: move those projects under the temp
# dir, each a repository, so a read can run inside one.
grep -rlZ "/home/dev/" "$TMP/home" | xargs -0 sed -i "s#/home/dev/#$TMP/dev/#g"
mapfile -t projects < <(grep -rhoE "$TMP/dev/[A-Za-z0-9_.-]+" "$TMP/home" | sort -u)
for p in "${projects[@]}"; do
  mkdir -p "$p"
  git -C "$p" init -q
done
out projects "${#projects[@]}"

export HOME=$TMP/home PEAT_DATA_DIR=$TMP/data
unset PEAT_DB
log "peat setup --user (imports the corpus into the user-level ledger)"
(cd "$TMP" && "$PEAT" setup --user --no-model >/dev/null 2>"$TMP/setup.err") ||
  { cat "$TMP/setup.err" >&2; exit 1; }

# The project with the most sessions, so the scoped read has the most to show.
here=$(for p in "${projects[@]}"; do
  (cd "$p" && printf '%s %s\n' "$("$PEAT" sessions --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" "$p")
done | sort -rn | head -1 | cut -d' ' -f2-)
cd "$here"
out scoped_sessions "$("$PEAT" sessions --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
out all_sessions "$("$PEAT" --all-projects sessions --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"

declare -A figures
# pair NAME ARGS...: the read scoped (as it runs here) and with --all-projects.
pair() {
  local name=$1
  shift
  local scoped all
  scoped=$(time_runs "${name}_scoped" "$RUNS" "$PEAT" "$@")
  all=$(time_runs "${name}_all" "$RUNS" "$PEAT" --all-projects "$@")
  printf '%s\n%s\n' "$scoped" "$all"
  figures[$name]="$(sed -n 's/.*_median_ms: //p' <<<"$scoped") $(sed -n 's/.*_median_ms: //p' <<<"$all")"
}
pair sessions sessions
pair brief brief
pair recall recall --keyword-only error handling
pair events events --kind commit
time_runs agent_codex "$RUNS" "$PEAT" --all-projects --agent codex sessions
for name in sessions brief recall events; do
  read -r s a <<<"${figures[$name]}"
  out "${name}_scoped_over_all" "$(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.3f", s / a }')"
done
