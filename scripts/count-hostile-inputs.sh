#!/usr/bin/env bash
# Counts the hostile inputs gpusched is tried on (issue 23): the bad-input
# regression tests (each subtest one input; TestHostileWorkloadParams logs
# how many parameter values it set) and every fuzz target run for
# FUZZTIME (default 30s) with 2 workers. Every one of them must end in a
# result the test's checks accept or in an error naming its cause; a wrong
# or lost result fails the test, and the script then exits non-zero.
#
#   scripts/count-hostile-inputs.sh            # tests and fuzzers
#   FUZZTIME=0 scripts/count-hostile-inputs.sh # tests only
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}

tests='TestBadInputTable|TestRunErrors|TestPaperReportRefusals|TestHostileWorkloadParams|TestHostileNumbersAreLineErrors|TestHostileSizes|TestConfigNumbersMustBeFiniteAndInRange|TestChainsPastTheHorizon|TestHostCostsPastTheHorizon|TestSlowCopyPastTheHorizon|TestWorkMustBeFinite|Livelock|Polling|TestCheckOutDir|TestResumeKeepsSavedRows|TestMerge|TestReadResultsRefuses|TestOutDirStaysUnderResults|TestWriteFileRefusesSymlinks|TestFileNamesAreUniqueAfterReduction|TestRunWritesEveryFileOnce|TestParamErrors|TestBadParams|TestStaticErrors|TestDynamicErrors|TestBadParametersAreErrors|TestProductAndPlus|Fuzz'
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! go test -count=1 -v -run "$tests" ./... >"$log" 2>&1; then
	grep -E -- '--- FAIL|^FAIL' "$log" >&2
	exit 1
fi
# Leaf tests: a PASS line with no subtests of its own. Tests of the same
# name in two packages count once, so the count errs low.
leaves=$(awk '/--- PASS/ { name = $3; n[name] = 1 } END { for (a in n) { leaf = 1; for (b in n) if (index(b, a "/") == 1) { leaf = 0; break } ; c += leaf } ; print c }' "$log")
params=$(sed -n 's/.* \([0-9][0-9]*\) hostile parameter values tried.*/\1/p' "$log" | head -1 || true)
params=${params:-0}
echo "regression tests and fuzz seed corpora: $leaves passing leaf tests (one input each, but TestHostileWorkloadParams: $params inputs)"
total=$((leaves - 1 + params))

if [ "$FUZZTIME" != 0 ]; then
	for spec in device:FuzzValidateLaunch device:FuzzValidateCopy device/sim:FuzzParseConfig \
		experiments:FuzzParseExperiment experiments:FuzzWorkloadParams experiments:FuzzParseSweepParam \
		experiments:FuzzParseShard experiments:FuzzHostileWorkloadParams experiments:FuzzMerge workloads:FuzzProduct; do
		pkg=${spec%%:*} fz=${spec##*:}
		if ! go test "./$pkg" -run '^$' -fuzz "^$fz\$" -fuzztime "$FUZZTIME" -parallel 2 >"$log" 2>&1; then
			echo "$fz: FAILED" >&2
			tail -20 "$log" >&2
			exit 1
		fi
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
		echo "$fz ($pkg): ${execs:-0} executions in $FUZZTIME"
		total=$((total + ${execs:-0}))
	done
fi
echo "inputs tried: $total; wrong results: 0; lost results: 0 (every test passed)"
