# scripts/gpu/lease.sh: the start every one-lease script shares. Source it
# with TAG set to the script's folder under .gpu/ (its carried binary and
# BUILD); it
#   - unpacks $BIN (default .gpu/$TAG/gpusched) from its .xz if needed,
#   - makes the work folder $W, with device.txt (the GPU's name and driver,
#     the date, the host's CPUs) and a copy of .gpu/$TAG/BUILD,
#   - sets $gpu to the GPU's name for the tarball's (e.g. nvidia-h200), or
#     "sim" when DEVICE names a simulator config (a dry run here).
# The caller writes its results under $W and packs it into $OUT.
BIN=${BIN:-.gpu/$TAG/gpusched}
[ -x "$BIN" ] || { [ -f "$BIN.xz" ] && xz -dk "$BIN.xz"; }
chmod +x "$BIN"
W=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; date -u; nproc; } > "$W/device.txt"
cp ".gpu/$TAG/BUILD" "$W/" 2>/dev/null
gpu=$(head -1 "$W/device.txt" | sed 's/ /-/g; s/,.*//' | tr 'A-Z' 'a-z')
[ "${DEVICE:-cuda}" = cuda ] || gpu=sim
