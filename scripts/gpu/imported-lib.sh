# Sourced by the imported-* GPU scripts (issue #19) once they have set B
# (the folder of the carried binaries), DEV and R (the output folder):
# log, the unpacking of the binaries, the record of the build and the
# device, and workloads/file's GPU replay tests, which each script ran
# with its own copy of these lines.
start=$(date +%s)
log() { echo "== $* ($(date -u +%T), $(($(date +%s) - start)) s)"; }

# imported_unpack unpacks every $B/*.gz beside itself and requires
# $B/gpusched; it ends the script on failure.
imported_unpack() {
	local z
	for z in "$B"/*.gz; do
		[ -e "$z" ] || continue
		gzip -dc "$z" > "${z%.gz}" && chmod +x "${z%.gz}" || { echo "cannot unpack $z" >&2; exit 1; }
	done
	[ -x "$B/gpusched" ] || { echo "missing $B/gpusched" >&2; exit 1; }
}

# imported_build_txt records the binaries' commit and the date in $R/build.txt.
imported_build_txt() { { cat "$B/commit.txt" 2>/dev/null; date -u; } > "$R/build.txt"; }

# imported_device_txt records the GPU (name, driver, memory, SM clock) in
# $R/device.txt and prints it.
imported_device_txt() {
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$R/device.txt" 2>&1
	cat "$R/device.txt"
}

# imported_replay_tests SECONDS [FLAGS...] runs workloads/file's GPU replay
# tests (TestGPUReplay, TestGPUReplayProbe) from $B/file.test, with FLAGS
# (e.g. -test.count 3) and a time limit, into $R/replay-test.log, its exit
# status appended as rc=N.
imported_replay_tests() {
	local limit=$1
	shift
	log "replay kernel tests"
	(cd workloads/file && timeout "$limit" "../../$B/file.test" -test.run 'GPUReplay' "$@" -test.v) > "$R/replay-test.log" 2>&1
	echo "rc=$?" >> "$R/replay-test.log"
}
