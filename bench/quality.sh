#!/usr/bin/env bash
# Retrieval quality: hit@1, hit@5 and MRR@10 of keyword-only, semantic-only and hybrid recall
# on a labelled query set (bench/quality/topics.py: 43 sessions with keyword, paraphrase and
# mixed queries each, and 25 queries about nothing recorded), among background sessions
# from examples/synth.rs. Prints a table, then the similarity distributions the floor
# (src/reads/recall.rs FLOOR) is calibrated from.
#
#   bench/quality.sh                    # this tree's peat (release build, as bench/lib.sh)
#   PEAT_BIN=/path/to/peat bench/quality.sh   # another build (an older one is scored from
#                                              # its hybrid answer's lane ranks)
#
# Needs the pinned model (`peat model fetch`; PEAT_DATA_DIR or ~/.local/share/peat). The
# store is kept under target/quality (QUALITY_DIR), so a second run embeds only what changed;
# HOME points there, never at this machine's ~/.claude or ~/.codex.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

build_release
peat="${PEAT_BIN:-$PEAT}"
model_dir="${PEAT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/peat}"
if [ ! -f "$model_dir/models/all-MiniLM-L6-v2-int8/model.onnx" ]; then
  echo "bench/quality.sh: no model under $model_dir; run \`peat model fetch\` first" >&2
  exit 2
fi

# One store per corpus (the generated transcripts, by hash), shared by every peat scored
# on it: views another peat built are rebuilt from the ledger, reusing cached embeddings.
root="${QUALITY_DIR:-$PWD/target/quality}"
mkdir -p "$root"
fresh=$(mktemp -d "$root/gen.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
# Background: 16 sessions of generated work (a few thousand texts), then the labelled ones.
"$SYNTH" --out "$fresh/home" --sessions 16 --events-per-session 250 \
  --start 2026-05-01 --days 60 --seed 11 2>/dev/null
python3 bench/quality/gen.py "$fresh/home" "$fresh/queries.jsonl"
corpus=$(cd "$fresh/home" && find . -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)
work="$root/corpus-$corpus"
mkdir -p "$work"
[ -d "$work/home" ] || mv "$fresh/home" "$work/home"
mv "$fresh/queries.jsonl" "$work/queries.jsonl"
export HOME="$work/home" PEAT_DB="$work/db" PEAT_DATA_DIR="$model_dir"
export CLAUDE_CONFIG_DIR="$HOME/.claude" CODEX_HOME="$HOME/.codex"

start=$(date +%s)
"$peat" import >/dev/null 2>"$work/import.log" || { cat "$work/import.log" >&2; exit 2; }
# The import leaves the vectors to a background pass: wait for it, or the semantic lane is
# scored half-empty.
"$peat" model embed >/dev/null 2>>"$work/import.log" || { cat "$work/import.log" >&2; exit 2; }
echo "store: $(grep -o '[0-9]* events' "$work/import.log" | head -1 || echo 'already captured'); import and embedding took $(( $(date +%s) - start )) s"
python3 bench/quality/score.py "$peat" "$work/queries.jsonl" --raw "$work/raw.jsonl"
