#!/bin/bash
# The fidelity campaign on one GPU: the synthetic DAG shapes
# (configs/experiments/fidelity-dags-gpu.yaml) and six held-out random DAGs
# drawn from SEED (fidelity-dags-random-gpu.yaml), RUNS times each for the
# GPU's run-to-run spread, then `gpusched validate` of every run against the
# simulator's default config of this GPU (CPU only) as the summary, printed
# last. Everything lands in $OUT/fidelity.tgz.
#
#   usage: OUT=dir bash scripts/gpu/fidelity-campaign.sh [RUNS=2] [SEED=now]
#
# Build here first (the GPU host has no Go):
#   go build -tags cuda -ldflags='-s -w' -o .gpu/fidelity/gpusched ./cmd/gpusched
# DEVICE=h100 runs the same steps on the simulator (no GPU), to test this
# script; BUDGET (seconds, default 540) bounds the whole call, so the
# tarball is written even if a step runs long.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/fidelity/gpusched}
DEVICE=${DEVICE:-cuda}
BUDGET=${BUDGET:-540}
RUNS=${1:-2}
SEED=${2:-$(date +%s)}
: "${OUT:?set OUT to the directory that comes back}"
R=$OUT/fidelity
mkdir -p "$R"
start=$(date +%s)
LOG=$R/campaign.log

pack() {
	tar czf "$OUT/fidelity.tgz" -C "$OUT" fidelity && echo "packed $OUT/fidelity.tgz ($(du -h "$OUT/fidelity.tgz" | cut -f1))"
}
trap pack EXIT

# step NAME CAP KEEP CMD...: runs CMD under the smaller of CAP and what is
# left of the budget less KEEP seconds (kept for the steps after it),
# logging its time.
step() {
	local name=$1 cap=$2 keep=$3
	shift 3
	local left=$((BUDGET - keep - ($(date +%s) - start)))
	if [ "$left" -lt 10 ]; then
		echo "$name: skipped (budget)" | tee -a "$LOG"
		return 1
	fi
	local t=$((left < cap ? left : cap)) s
	s=$(date +%s%N)
	timeout "$t" "$@" >"$R/$name.log" 2>&1
	local rc=$?
	local ms=$((($(date +%s%N) - s) / 1000000))
	printf '%s: rc=%d %d.%03ds (cap %ds)\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "$t" | tee -a "$LOG"
	return $rc
}

if [ ! -x "$BIN" ]; then
	echo "no $BIN: build it first (see the top of $0)" | tee -a "$LOG"
	exit 2
fi
{
	echo "fidelity campaign: device $DEVICE, runs $RUNS, seed $SEED, $(date -u +%FT%TZ)"
	git log -1 --format='commit %H %s' 2>/dev/null || true
} | tee -a "$LOG"
{ date -u; nvidia-smi; } >"$R/nvidia-smi.txt" 2>&1
# The experiment files, on this device (cuda unless testing).
for x in fidelity-dags-gpu fidelity-dags-random-gpu; do
	sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" "configs/experiments/$x.yaml" >"$R/$x.yaml"
done

# A run whose rows failed still writes its results (the failures are in
# its rows); a run that was cut short writes none.
results=()
for run in $(seq 1 "$RUNS"); do
	step "run$run-dags" 200 90 "$BIN" run "$R/fidelity-dags-gpu.yaml" -o "$R/run$run/dags"
	step "run$run-random" 150 90 "$BIN" sweep "$R/fidelity-dags-random-gpu.yaml" --param "seed=$SEED" -o "$R/run$run/random"
	for f in "$R/run$run/dags/results.json" "$R/run$run/random/results.json"; do
		[ -f "$f" ] && results+=("$f")
	done
done

# The summary: every finished run against the simulator (the experiment
# files are found under configs/experiments by the names in the results).
if [ ${#results[@]} -gt 0 ]; then
	step validate 120 10 "$BIN" validate "${results[@]}" -o "$R/validate"
fi
echo "total $(($(date +%s) - start))s" | tee -a "$LOG"
trap - EXIT
pack
echo
echo "=== fidelity campaign summary (seed $SEED) ==="
cat "$LOG"
cat "$R/validate.log" 2>/dev/null
