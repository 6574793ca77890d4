# scripts/gpu/lease.sh: the start every one-lease script shares. Source it
# with TAG set to the script's folder under .gpu/ (its carried binary and
# BUILD); it
#   - unpacks $BIN (default .gpu/$TAG/gpusched) from its .xz if needed,
#   - makes the work folder $W, with device.txt (the GPU's name and driver,
#     the date, the host's CPUs) and a copy of .gpu/$TAG/BUILD,
#   - sets $gpu to the GPU's name for the tarball's (e.g. nvidia-h200), or
#     "sim" when DEVICE names a simulator config (a dry run here).
# The caller writes its results under $W and packs it into $OUT; probe
# (below) runs one calibrate section into it.
BIN=${BIN:-.gpu/$TAG/gpusched}
[ -x "$BIN" ] || { [ -f "$BIN.xz" ] && xz -dk "$BIN.xz"; }
chmod +x "$BIN"
W=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; date -u; nproc; } > "$W/device.txt"
cp ".gpu/$TAG/BUILD" "$W/" 2>/dev/null
gpu=$(head -1 "$W/device.txt" | sed 's/ /-/g; s/,.*//' | tr 'A-Z' 'a-z')
[ "${DEVICE:-cuda}" = cuda ] || gpu=sim
# probe NAME STEM runs `calibrate --only NAME` on $DEVICE (cuda unless set)
# under $CAL_TIMEOUT seconds (180 unless set), writing $W/STEM.json, .md
# and .log, and appends "STEM rc=N" to $W/rc.txt.
probe() {
  timeout "${CAL_TIMEOUT:-180}" "$BIN" calibrate --device "${DEVICE:-cuda}" --only "$1" --raw "$W/$2.json" --report "$W/$2.md" > "$W/$2.log" 2>&1
  echo "$2 rc=$?" >> "$W/rc.txt"
}
# probes N NAME STEM runs probe NAME in N processes one after another,
# writing STEM1 .. STEMN under $W.
probes() {
  for p in $(seq "$1"); do
    probe "$2" "$3$p"
  done
}
# experiment NAME FILE [FLAGS...] runs `gpusched run FILE -o $W/NAME FLAGS`
# under $RUN_TIMEOUT seconds (300 unless set), its output in $W/NAME.log,
# and appends "NAME rc=N in S s" to $W/rc.txt.
experiment() {
  local name=$1 file=$2 t0
  shift 2
  t0=$(date +%s)
  timeout "${RUN_TIMEOUT:-300}" "$BIN" run "$file" -o "$W/$name" "$@" > "$W/$name.log" 2>&1
  echo "$name rc=$? in $(($(date +%s) - t0)) s" >> "$W/rc.txt"
}
