#!/usr/bin/env bash
# DNN kernels cold and warm (issue #18, session 16: kernels run longer in a
# program than their profile points say). A profile point repeats one launch
# back to back, its weights warm in L2; in a program each layer reads its own
# slice of the model's one weights buffer, last read a whole run ago. Two
# measurements, in one tarball $OUT/dnn-cold-TAG.tgz:
#  1. `gpusched profile --cold-l2` of configs/experiments/dnn-kernels-gpu.yaml
#     (inception-v3-s4, resnext-50-s4, amoebanet, resnext-50-s2): every
#     distinct launch timed warm back to back (ns), after an L2 eviction
#     (cold_ns) and once right after (rewarm_ns): the cold term per launch the
#     simulator's L2 residency charges, on the launches of the rows it times,
#     and inception-v3-s4's launches, which no committed point covers.
#  2. `gpusched trace` of the serial (one stream) row of inception-v3-s4,
#     resnext-50-s4 and amoebanet: a kernel-by-kernel timeline each
#     (dnn-kernels.sh's timelines of these rows hold the graph row's run).
#
# Run from the repository root, with the binary built here:
#   mkdir -p .gpu/dnncold && go build -tags cuda -ldflags='-s -w' -o .gpu/dnncold/gpusched ./cmd/gpusched && gzip -f .gpu/dnncold/gpusched
#   OUT=/some/dir bash scripts/gpu/dnn-cold.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/path/to/gpusched bash scripts/gpu/dnn-cold.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/dnncold/gpusched,
# unpacked from BIN.gz when that is there), PROFILE_S (default 30: the
# profile's deadline; it writes what it measured by then).
set -uo pipefail

PROFILE_S=${PROFILE_S:-30}

. scripts/gpu/device-tag.sh
script_start dnncold
rc=0

exp=$(experiment_on_device configs/experiments/dnn-kernels-gpu.yaml)
timed_step "cold profile" timeout $((PROFILE_S + 40)) "$BIN" profile --device "$DEVICE" --cold-l2 \
    --max-sizes 1000000 --max-occupancies 1 --bind-bytes 1000000000000 --budget 1000s --deadline "${PROFILE_S}s" \
    -o "$work/$tag-dnn-cold-profile.yaml" "$exp" >"$work/profile-fit.txt" 2>"$work/profile.log"
for w in inception-v3-s4 resnext-50-s4 amoebanet; do
    timed_step "trace $w serial" timeout 40 "$BIN" trace "$exp" --workload "$w" --scheduler serial \
        --device "$DEVICE" -o "$work/$tag-$w-serial-trace.json" 2>"$work/trace-$w.log"
done
script_pack dnn-cold

echo "== dnn-cold on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep -E '^(cold profile|trace|total)' "$work/device.txt"
tail -2 "$work/profile.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
exit "$rc"
