# Sourced by the GPU scripts: script_start NAME is the start they share
# (below); binary_ready NAME unpacks the carried $BIN.gz or $BIN.xz over
# $BIN and checks $BIN runs; device_tag FILE writes what the device is
# (nvidia-smi, or the simulator config of a dry run), the date, host,
# binary and commit to FILE and sets tag (h100, h200, another GPU's name,
# or sim-CONFIG), which names the output files; host_record FILE adds the
# build, the binary's version and the host's CPU; paper_run runs a paper's
# experiment; timed_step LABEL CMD... runs one step and logs its exit
# status and seconds (below); script_pack NAME ends what script_start began
# (below). Uses $DEVICE and $BIN.

# script_start NAME [--host-record]: what every script run from the
# repository root does first. OUT must be set; DEVICE defaults to cuda and
# BIN to .gpu/NAME/gpusched (a script whose binary lives elsewhere sets
# BIN's default before); start is when it began; the carried binary is
# unpacked (binary_ready: the script exits 2 when it cannot); work is a
# temporary directory removed on exit; device_tag (and with --host-record
# host_record) writes $work/device.txt and sets tag.
script_start() {
    : "${OUT:?set OUT to the directory the tarball goes to}"
    DEVICE=${DEVICE:-cuda}
    BIN=${BIN:-.gpu/$1/gpusched}
    start=$(date +%s)
    binary_ready "$1" || exit 2
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    device_tag "$work/device.txt"
    if [ "${2:-}" = --host-record ]; then
        host_record "$work/device.txt"
    fi
}

device_tag() {
    local out=$1 gpu
    if [ "$DEVICE" = cuda ]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,pcie.link.gen.current --format=csv >"$out" 2>&1
        nvidia-smi >>"$out" 2>&1
        gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
        case "$gpu" in
            *H100*) tag=h100 ;;
            *H200*) tag=h200 ;;
            *) tag=$(printf '%s' "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-') ;;
        esac
        [ -n "$tag" ] || tag=gpu
    else
        echo "simulator config $DEVICE (dry run)" >"$out"
        tag=sim-$(basename "$DEVICE" .yaml)
    fi
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host: $(uname -srm), $(nproc) CPUs"
        echo "binary: $(sha256sum "$BIN" | cut -c1-16)"
        echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    } >>"$out"
}

# host_record FILE appends, after device_tag, the BUILD file beside $BIN
# (the commit it was built from), the binary's version, the CPU's model and
# lscpu: the scripts whose rows are host-bound record the host they ran on.
host_record() {
    {
        echo "build: $(cat "$(dirname "$BIN")/BUILD" 2>/dev/null || echo 'no BUILD file')"
        "$BIN" version 2>&1 | head -3
        echo "cpu: $(grep -m1 'model name' /proc/cpuinfo)"
        lscpu 2>&1
    } >>"$1"
}

# binary_ready NAME: the carried binary $BIN.gz or $BIN.xz (when there;
# .xz through python3's lzma, since the GPU host may have no xz) replaces
# one left from an earlier call; fails, naming script NAME, when it cannot
# be unpacked or $BIN does not run.
binary_ready() {
    if [ -f "$BIN.gz" ]; then
        gunzip -c "$BIN.gz" >"$BIN" && chmod +x "$BIN"
    fi
    if [ -f "$BIN.xz" ]; then
        python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$BIN.xz" "$BIN" &&
            chmod +x "$BIN" || { echo "$1: cannot unpack $BIN.xz" >&2; return 2; }
    fi
    if [ ! -x "$BIN" ]; then
        echo "$1: no binary at $BIN (see the header for the build command)" >&2
        return 2
    fi
}

# paper_run RUNNER CONFIG TIMEOUT DIR: `gpusched paper RUNNER run` of CONFIG
# on $DEVICE (its devices line rewritten), results and logs under DIR/RUNNER
# and DIR/RUNNER-*.log, figures removed, its exit status and seconds appended
# to DIR/device.txt; returns that exit status.
paper_run() {
    local runner=$1 config=$2 limit=$3 dir=$4 t0 r
    t0=$(date +%s)
    sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" "$config" >"$dir/$(basename "$config")"
    timeout "$limit" "$BIN" paper "$runner" run "$dir/$(basename "$config")" -o "$dir/$runner" \
        >"$dir/$runner-run.log" 2>"$dir/$runner-stderr.log"
    r=$?
    rm -f "$dir/$runner/"*.svg "$dir/$runner/"*.pdf
    echo "paper $runner run: exit $r in $(($(date +%s) - t0))s" >>"$dir/device.txt"
    return $r
}

# timed_step LABEL CMD...: runs CMD (the caller's redirections apply to
# it), writes "LABEL: exit R in Ns" into $work/device.txt and keeps a
# failing status in rc (the script's own exit status at its end). It
# leaves the status in r and returns 0: a failed step is logged, and the
# script goes on to pack what the others wrote.
timed_step() {
    local label=$1 t0
    shift
    t0=$(date +%s)
    "$@"
    r=$?
    [ "$r" = 0 ] || rc=$r
    echo "$label: exit $r in $(($(date +%s) - t0))s" >>"$work/device.txt"
    return 0
}

# calibrate_step LABEL NAME SECTION...: the probe scripts' calibrate step, a
# timed_step running `calibrate --only SECTION...` on $DEVICE within
# $CAL_TIMEOUT, its raw measurements in $work/$tag-NAME.json, its report in
# $work/$tag-NAME.md and its progress in $work/calibrate.log (the summaries
# grep it). Needs CAL_TIMEOUT, BIN, DEVICE.
calibrate_step() {
    local label=$1 name=$2 only=() s
    shift 2
    for s in "$@"; do
        only+=(--only "$s")
    done
    timed_step "$label" timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" "${only[@]}" \
        --raw "$work/$tag-$name.json" --report "$work/$tag-$name.md" 2>"$work/calibrate.log"
}

# script_pack NAME: what every script started by script_start does once its
# runs are done: the total seconds since start appended to
# $work/device.txt, and $work packed into tarball=$OUT/NAME-$tag.tgz.
script_pack() {
    echo "total $(($(date +%s) - start))s" >>"$work/device.txt"
    tarball="$OUT/$1-$tag.tgz"
    mkdir -p "$OUT"
    tar czf "$tarball" -C "$work" .
}

# calibrate_over_connections PROBE RAW LOG: one calibrate --only PROBE per
# value of $CONNECTIONS (CUDA_DEVICE_MAX_CONNECTIONS; "default" leaves it
# unset, the driver's own setting), each a timed_step writing
# $work/$tag-RAW<N>.json / .md and $work/calibrate-LOG<N>.log: the probes
# that ask whether a cost goes through the GPU's hardware queues
# (setbatch-connections.sh, setq.sh). Needs CAL_TIMEOUT, BIN, DEVICE.
calibrate_over_connections() {
    local probe=$1 raw=$2 log=$3 n env_n
    for n in $CONNECTIONS; do
        env_n=(env CUDA_DEVICE_MAX_CONNECTIONS="$n")
        [ "$n" = default ] && env_n=(env -u CUDA_DEVICE_MAX_CONNECTIONS)
        timed_step "calibrate with CUDA_DEVICE_MAX_CONNECTIONS=$n" "${env_n[@]}" timeout "$CAL_TIMEOUT" "$BIN" calibrate \
            --device "$DEVICE" --only "$probe" \
            --raw "$work/$tag-$raw$n.json" --report "$work/$tag-$raw$n.md" 2>"$work/calibrate-$log$n.log"
    done
}

# connections_summary NAME LOG PATTERN: the summary a connections sweep
# prints last: the device, each step's exit, and per connection count the
# lines of calibrate-LOG<N>.log matching the grep PATTERN.
connections_summary() {
    local name=$1 log=$2 pattern=$3 n
    echo "== $name on $tag ($DEVICE)"
    head -2 "$work/device.txt"
    grep '^calibrate with\|^total' "$work/device.txt"
    for n in $CONNECTIONS; do
        echo "-- CUDA_DEVICE_MAX_CONNECTIONS=$n"
        grep -h "$pattern" "$work/calibrate-$log$n.log" | sed 's/^calibrate: //'
    done
    echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
}

# acs_thread_table RESULTS.json: ACS-SW's scheduler threads, per row that
# has them (scheduler_stats thread_*), the ns per job each thread spent
# getting work, launching, recording, waiting and in queue calls, and its
# window's busy and blocked ns per op: the summary acs-threads.sh and
# acsx.sh print last (rows without threads, serial's, are left out).
acs_thread_table() {
    python3 - "$1" <<'PY' || true
import json, sys
cols = [("jobs", "thread_jobs"), ("get", "thread_get_ns_per_job"), ("launch", "thread_launch_ns_per_job"),
        ("record", "thread_record_ns_per_job"), ("sync", "thread_sync_ns_per_job"),
        ("queue", "thread_queue_ns_per_job"), ("w.busy", "window_busy_ns_per_op"),
        ("w.blk", "window_blocked_ns_per_op")]
print(f'{"workload":16s} {"scheduler":30s} {"ms us":>8s} ' + " ".join(f"{c:>6s}" for c, _ in cols)
      + "  (ns per job / per op)")
for r in json.load(open(sys.argv[1]))["rows"]:
    st = r.get("scheduler_stats") or {}
    if "thread_jobs" not in st:
        continue
    print(f'{r["workload"][:16]:16s} {r["scheduler"][:30]:30s} {r["makespan_us"]["median"]:8.1f} '
          + " ".join(f"{st.get(k, 0):6.0f}" for _, k in cols))
PY
}

# experiment_on_device FILE: the experiment file to run on $DEVICE: FILE
# itself on the GPU; for a dry run, a copy in $work whose devices are the
# simulator config instead of cuda (the same rows on the simulator).
experiment_on_device() {
    if [ "$DEVICE" = cuda ]; then
        echo "$1"
        return
    fi
    sed "s|devices: \[cuda\]|devices: [$DEVICE]|" "$1" >"$work/exp.yaml"
    echo "$work/exp.yaml"
}
