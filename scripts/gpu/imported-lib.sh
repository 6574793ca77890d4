# Sourced by the imported-* GPU scripts (issue #19) once they have set B
# (the folder of the carried binaries), DEV and R (the output folder):
# log, the unpacking of the binaries, the record of the build and the
# device, and workloads/file's GPU replay tests, which each script ran
# with its own copy of these lines.
start=$(date +%s)
log() { echo "== $* ($(date -u +%T), $(($(date +%s) - start)) s)"; }

# imported_unpack [BINARY...] unpacks every $B/*.gz and $B/*.xz (with
# python3's lzma: the host may have no xz) beside itself and requires
# $B/BINARY for each (default: gpusched); it ends the script on failure.
imported_unpack() {
	local z b
	for z in "$B"/*.gz; do
		[ -e "$z" ] || continue
		gzip -dc "$z" > "${z%.gz}" && chmod +x "${z%.gz}" || { echo "cannot unpack $z" >&2; exit 1; }
	done
	for z in "$B"/*.xz; do
		[ -e "$z" ] || continue
		python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$z" "${z%.xz}" &&
			chmod +x "${z%.xz}" || { echo "cannot unpack $z" >&2; exit 1; }
	done
	for b in "${@:-gpusched}"; do
		[ -x "$B/$b" ] || { echo "missing $B/$b" >&2; exit 1; }
	done
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

# imported_ab_run TAG BINARY CONFIG VALUES SECONDS [serial]: CONFIG on
# $DEV at VALUES ("O F": overhead_ns and floor_ns), with only serial and
# serial+graph if the sixth argument is given, for at most SECONDS; its
# results in $R/TAG, its config beside them. The A/B scripts
# (imported-ab.sh, imported-v5ab.sh) run each kernel's binary with it.
imported_ab_run() {
	local cfg
	cfg=configs/experiments/$(basename "$R")-$1-run.yaml
	sed -E "s/^devices: .*/devices: [$DEV]/; s/overhead_ns: [0-9]+, floor_ns: [0-9]+/overhead_ns: ${4% *}, floor_ns: ${4#* }/" "$3" > "$cfg"
	[ -n "${6:-}" ] && sed -i -E '/^  - \{name: [^,]*, kind: /{/^  - \{name: serial(\+graph)?, /!d}' "$cfg"
	log "$1 ($3 at $4)"
	timeout "$5" "$2" paper imported run "$cfg" -o "$R/$1" > "$R/$1.log" 2>&1
	echo "rc=$?" | tee -a "$R/$1.log"
	mv "$cfg" "$R/"
	grep -E "serial\+graph" "$R/$1.log" | head -10
}

# imported_kernel_run V TEST_LIMIT EAGER_LIMIT GRAPH_LIMIT runs one replay
# kernel version's experiments (imported-vV, imported-graph-vV,
# imported-graph-vV-o0, from configs/experiments/*-vV-gpu*.yaml) after, on
# a GPU, workloads/file's GPU tests; with FROM_PROBE set, at the values the
# probe measured (eager imports: its "measured:" line; graph-replay traces:
# its "replay signature:" line), written into copies of the configs. Every
# file lands in $R, packed into $OUT/import-vV.tgz. imported-v3.sh and
# imported-v4.sh call it.
imported_kernel_run() {
	local v=$1 test_limit=$2 eager=$3 graph=$4 run name cfg run_cfg line val o f
	imported_unpack
	imported_build_txt
	if [ "$DEV" = cuda ]; then
		[ -x "$B/file.test" ] || { echo "missing $B/file.test" >&2; exit 1; }
		imported_device_txt
		imported_replay_tests "$test_limit"
		grep -E 'shape|ranges grid|sig grid|per range|signature:|measured|--- |rc=' "$R/replay-test.log"
	fi
	for run in "imported-v$v:$eager" "imported-graph-v$v:$graph" "imported-graph-v$v-o0:$graph"; do
		name=${run%:*}
		cfg=configs/experiments/${name%-o0}-gpu${name##*-v$v}.yaml
		log "$name ($cfg) on $DEV"
		run_cfg=$cfg
		if [ "$DEV" != cuda ] || [ -n "${FROM_PROBE:-}" ]; then
			# a dry run on the simulator, or the probe's values: a copy
			run_cfg=${cfg%.yaml}-run.yaml
			sed -E "s/^devices: .*/devices: [$DEV]/" "$cfg" > "$run_cfg"
			line="measured:"
			case $name in imported-graph*) line="replay signature:" ;; esac
			val=$(grep -o "$line overhead_ns=[0-9]* floor_ns=[0-9]*" "$R/replay-test.log" 2>/dev/null | tail -1 | sed "s/^$line //")
			if [ -n "${FROM_PROBE:-}" ] && [ -n "$val" ]; then
				o=${val%% *}; o=${o#overhead_ns=}; f=${val##*floor_ns=}
				case $name in *-o0) o=0 ;; esac
				sed -i -E "s/overhead_ns: [0-9]+, floor_ns: [0-9]+/overhead_ns: $o, floor_ns: $f/" "$run_cfg"
				echo "$name: overhead_ns $o, floor_ns $f from the probe ($line)" | tee -a "$R/from-probe.txt"
			fi
			cp "$run_cfg" "$R/"
		fi
		timeout "${run#*:}" "$B/gpusched" paper imported run "$run_cfg" -o "$R/$name" > "$R/$name.log" 2>&1
		echo "rc=$?" | tee -a "$R/$name.log"
		[ "$run_cfg" = "$cfg" ] || rm -f "$run_cfg"
		grep -E "serial\+graph|^\S+ +serial " "$R/$name.log" | head -24
	done
	log done
	find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
	tar czf "$OUT/import-v$v.tgz" -C "$OUT" "import-v$v" && rm -rf "$R"
}

# The A/B scripts' helpers (imported-v5ab.sh, imported-v6ab.sh), which set
# LIMIT (seconds for the whole script) and R.

# capped SECONDS: SECONDS, or what is left of LIMIT (less 15 s), at least 1.
capped() {
	local left=$((LIMIT - 15 - ($(date +%s) - start)))
	[ "$left" -lt 1 ] && left=1
	echo $(($1 < left ? $1 : left))
}

# probed KERNEL LINE DEFAULT: "O F" from the probe's line "KERNEL LINE:
# overhead_ns=O floor_ns=F", else DEFAULT.
probed() {
	local v
	v=$(grep -o "$1 $2: overhead_ns=[0-9]* floor_ns=[0-9]*" "$R/replay-test.log" 2>/dev/null | tail -1 |
		sed -E 's/.*overhead_ns=([0-9]+) floor_ns=([0-9]+)/\1 \2/')
	echo "${v:-$3}"
}

# run_one TAG BINARY CONFIG VALUES SECONDS [serial]: imported_ab_run,
# capped by what is left of LIMIT.
run_one() { imported_ab_run "$1" "$2" "$3" "$4" "$(capped "$5")" "${6:-}"; }

# imported_kernel_ab V BINARY KERNEL EAGER GRAPH ROUNDS EAGER_LIMIT: the A/B
# of replay kernel vV (its build BINARY; KERNEL the probe's name for it)
# against the fourth ($B/gpusched-v4) on one GPU: workloads/file's GPU
# tests once (on a GPU), then ROUNDS rounds of the graph-replay traces at
# 160/863 and the eager imports (serial, serial+graph) at 416/1119 with
# each, then vV's own set at the values the probe measured for KERNEL
# (EAGER and GRAPH, "O F", where it did not run), at most EAGER_LIMIT s
# for its eager imports; everything packed into $OUT/$(basename $R).tgz.
# AB_BASE (default 4) names another baseline version ($B/gpusched-vN and
# its configs), AB_EAGER and AB_GRAPH ("O F") the values both run at.
imported_kernel_ab() {
	local v=$1 bin=$2 kernel=$3 eager graph r
	local base=${AB_BASE:-4} at_eager=${AB_EAGER:-416 1119} at_graph=${AB_GRAPH:-160 863}
	if [ "$DEV" = cuda ]; then
		[ -x "$B/file.test" ] || { echo "missing $B/file.test" >&2; exit 1; }
		imported_device_txt
		imported_replay_tests "$(capped 60)"
		grep -E 'shape|ranges grid|sig grid|per range|busy|signature:|4 ranges:|measured|globaltimer|--- |rc=' "$R/replay-test.log"
	fi
	for r in $(seq 1 "$6"); do
		run_one "graph-v$base-r$r" "$B/gpusched-v$base" "configs/experiments/imported-graph-v$base-gpu.yaml" "$at_graph" 30
		run_one "graph-v$v-r$r" "$bin" "configs/experiments/imported-graph-v$v-gpu.yaml" "$at_graph" 30
		run_one "eager-v$base-r$r" "$B/gpusched-v$base" "configs/experiments/imported-v$base-gpu.yaml" "$at_eager" 40 serial
		run_one "eager-v$v-r$r" "$bin" "configs/experiments/imported-v$v-gpu.yaml" "$at_eager" 40 serial
	done
	eager=$(probed "$kernel" "4 ranges" "$4")
	graph=$(probed "$kernel" signature "$5")
	echo "replay kernel v$v's own set at: eager imports $eager, graph-replay traces $graph (overhead_ns floor_ns)" | tee "$R/from-probe.txt"
	run_one "imported-v$v" "$bin" "configs/experiments/imported-v$v-gpu.yaml" "$eager" "$7"
	run_one "imported-graph-v$v" "$bin" "configs/experiments/imported-graph-v$v-gpu.yaml" "$graph" 30
	run_one "imported-graph-v$v-o0" "$bin" "configs/experiments/imported-graph-v$v-gpu-o0.yaml" "0 ${graph#* }" 30
	log done
	find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
	tar czf "$OUT/$(basename "$R").tgz" -C "$OUT" "$(basename "$R")" && rm -rf "$R"
}
