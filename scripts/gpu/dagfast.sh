#!/usr/bin/env bash
# Why whole random DAG draws are simulated fast (issue #18, session 15): the
# short draws (serial under 200 us) are 13-20% fast on both GPUs, serial
# rows included (a per-run deficit of about 15 us on the s12-s14 leases),
# and 1468660699 draw5 (one synth_node launch of 877 blocks x 256 threads
# and one 898 KB download) 45% fast under every scheduler. Three parts, one
# lease:
#  1. `gpusched calibrate --only "host API costs" --only "launch latency,
#     back-to-back gap, wake-up"`: this lease's launch cost, latency and
#     synchronize wake (the committed fidelity rows' leases probed the
#     launch at 3.9-4.4 us against the config's 4.8).
#  2. `gpusched trace` (events around every command, host calls on their
#     lane) of six committed rows: seed 1468660699 draw5 serial, draw0
#     serial and rr4, seed 1795749633 draw0 serial (all 20-45% fast), seed
#     1762695147 draw3 serial (-2%, a control) and draw1 serial (+11%,
#     232 launches): kernel, copy and launch-gap time of one repetition.
#  3. `gpusched profile` of synth_node at the launches of random draws:
#     FIT: three seeds drawn for this probe (1764236011, 1764236023,
#     1764236037; in no committed results file) -> fit-profile.yaml;
#     CHECK: the six draws of seed 1468660699 (the fastest committed draws)
#     -> check-profile.yaml, to compare the model with their measured
#     kernels, never to fit.
#
# Build here (one binary):
#   mkdir -p .gpu/dagfast && go build -tags cuda -ldflags='-s -w' -o .gpu/dagfast/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/dagfast/BUILD; xz -9 -f .gpu/dagfast/gpusched
# There (no Go), from the repository root, carrying .gpu/dagfast:
#   OUT=$OUT bash scripts/gpu/dagfast.sh
# Dry run on the simulator (same binary):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/dagfast.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/dagfast/gpusched,
# unpacked from BIN.xz or BIN.gz), CAL_TIMEOUT (default 25 s), TRACE_TIMEOUT
# (per trace, default 15 s), PROFILE_TIMEOUT (per profile, default 35 s).
# Comes back: $OUT/dagfast-<gpu>.tgz: device.txt, <gpu>-host.json / .md
# (calibrate raw + report), traces/*.json.gz, fit-profile.yaml,
# check-profile.yaml and their logs.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-25}
TRACE_TIMEOUT=${TRACE_TIMEOUT:-15}
PROFILE_TIMEOUT=${PROFILE_TIMEOUT:-35}
TEMPLATE=configs/experiments/fidelity-dags-random-gpu.yaml

. scripts/gpu/device-tag.sh
script_start dagfast --host-record

# seeded SEED REPS: the random-DAG experiment at SEED with REPS repetitions
# on $DEVICE, written into $work.
seeded() {
    local f="$work/random-$1.yaml"
    sed -e "s/^seed: .*/seed: $1/" -e "s/^repetitions: .*/repetitions: $2/" \
        -e "s|^devices: \[cuda\]|devices: [$DEVICE]|" "$TEMPLATE" >"$f"
    echo "$f"
}

rc=0
calibrate_step "calibrate" host "host API costs" "launch latency, back-to-back gap, wake-up"

mkdir -p "$work/traces"
for row in "1468660699|draw5|serial" "1468660699|draw0|serial" "1468660699|draw0|rr4" \
    "1795749633|draw0|serial" "1762695147|draw3|serial" "1762695147|draw1|serial"; do
    IFS='|' read -r seed w s <<<"$row"
    f="$work/traces/$seed-$w-$s.json"
    timed_step "trace $seed $w / $s" timeout "$TRACE_TIMEOUT" "$BIN" trace "$(seeded "$seed" 5)" \
        --device "$DEVICE" --workload "$w" --scheduler "$s" -o "$f" >>"$work/trace.log" 2>&1
    gzip -f "$f" 2>/dev/null
done

timed_step "profile fit" timeout "$PROFILE_TIMEOUT" "$BIN" profile --device "$DEVICE" --max-sizes 160 \
    --budget 20s --deadline "$((PROFILE_TIMEOUT - 8))s" -o "$work/fit-profile.yaml" \
    "$(seeded 1764236011 1)" "$(seeded 1764236023 1)" "$(seeded 1764236037 1)" \
    >"$work/fit-profile.txt" 2>"$work/fit-profile.log"
timed_step "profile check" timeout "$PROFILE_TIMEOUT" "$BIN" profile --device "$DEVICE" --max-sizes 64 \
    --budget 20s --deadline "$((PROFILE_TIMEOUT - 8))s" -o "$work/check-profile.yaml" \
    "$(seeded 1468660699 1)" >"$work/check-profile.txt" 2>"$work/check-profile.log"

script_pack dagfast

# Summary, last.
echo "== dagfast on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^trace \|^profile \|^total' "$work/device.txt"
grep -h 'launch cost\|launch latency\|wake' "$work/calibrate.log" | head -6
grep 'makespan' "$work/trace.log"
tail -n 2 "$work/fit-profile.log" "$work/check-profile.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
