#!/usr/bin/env bash
# Runs the committed simulator results again after a change to the
# simulator's model (TestCommittedSimResultsReproduce fails until they are):
# every docs/results/*-sim*.json whose experiment file
# configs/experiments/NAME.yaml still runs as it ran, with the paper runner
# the file records, its results.json and tables/NAME.md (the runner's
# results.md less its figure lines) replaced; then the paper pages that
# cite them, each by the report command written at its bottom; then the
# bad-input golden file, whose rows include simulated makespans.
#
#   make sim-results                        # everything (20-30 min on 2 cores)
#   ONLY='imported-v2-*' make sim-results   # the files matching a glob, no pages
#   PAGES_ONLY=1 make sim-results           # the pages and the golden alone
#
# Environment: ONLY (a glob of results file names without .json; default
# every file; pages and golden only when unset), PAGES_ONLY (1: no runs),
# JOBS (rows at once, default 2), GO (default go).
set -euo pipefail

GO=${GO:-go}
JOBS=${JOBS:-2}
ONLY=${ONLY:-}
PAGES_ONLY=${PAGES_ONLY:-}
PAGES="autograph cusync imported imported-heldout tournament"

bin=$(mktemp -d)/gpusched
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$(dirname "$bin")"' EXIT
$GO build -o "$bin" ./cmd/gpusched

ran=0
for f in docs/results/*-sim*.json; do
    if [ -n "$PAGES_ONLY" ]; then
        break
    fi
    name=$(basename "$f" .json)
    # shellcheck disable=SC2053 # ONLY is a glob on purpose
    if [ -n "$ONLY" ] && [[ $name != $ONLY ]]; then
        continue
    fi
    runner=$(sed -n 's/^ *"runner": *"\([a-z0-9-]*\)".*/\1/p' "$f" | head -1)
    source=$(sed -n 's/^ *"source": *"\([^"]*\)".*/\1/p' "$f" | head -1)
    if [ -z "$runner" ]; then
        echo "skip $name: no runner recorded" >&2
        continue
    fi
    # A file made from configs/experiments/NAME.yaml runs from it; a file
    # converted from an earlier format names itself as its source and runs
    # from the experiment it holds (as TestCommittedSimResultsReproduce
    # does), pinned to the configs its rows ran on.
    in=configs/experiments/$name.yaml
    if [ "$source" = "$name.json" ]; then
        in=$f
    elif [ "$source" != "$name.yaml" ] || [ ! -f "$in" ]; then
        echo "skip $name: not runnable as it ran (source ${source:-none})" >&2
        continue
    fi
    echo "== $name ($runner, from $in)" >&2
    "$bin" paper "$runner" run "$in" -o "$tmp/$name" -j "$JOBS" >/dev/null
    cp "$tmp/$name/results.json" "$f"
    # The figure lines (and the blank line after each) point at files the
    # tables folder does not keep.
    awk '/^!\[.*\.svg\)$/ { skip = 1; next } skip && /^$/ { skip = 0; next } { skip = 0; print }' \
        "$tmp/$name/results.md" >"docs/results/tables/$name.md"
    ran=$((ran + 1))
done
echo "ran $ran results files again" >&2
if [ -n "$ONLY" ]; then
    exit 0
fi

for page in $PAGES; do
    md=docs/results/$page.md
    # The page's own report command: its line and any continuation lines.
    cmd=$(awk -v page="$md" '
        index($0, "paper ") && index($0, " report -o " page) { on = 1 }
        on { line = $0; sub(/^ +/, "", line); printf "%s", line; if (line !~ /\\$/) exit; printf "\n" }
    ' "$md" | sed 's/\\$//' | tr '\n' ' ')
    if [ -z "$cmd" ]; then
        echo "no report command at the bottom of $md" >&2
        exit 1
    fi
    cmd=${cmd#go run ./cmd/gpusched }
    cmd=${cmd#gpusched }
    echo "== $md" >&2
    eval "\"$bin\" $cmd"
done

$GO test ./cmd/gpusched -run TestBadInputTable -update-badinput >/dev/null
echo "pages and the bad-input golden written; check with: $GO test ./cmd/gpusched ./experiments/..." >&2
