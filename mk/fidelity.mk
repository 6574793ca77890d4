# docs/results/fidelity.md: every committed GPU results file simulated again
# on its GPU's default config (calibrated where one is) and on the datasheet
# config before calibration; no GPU needed. The SET files measured before SET
# warmed its graph execs ran set.warm=false (their entries leave warm out).
# Each file's simulated rows are kept in .cache/validate (not committed), so
# a rerun simulates only the files, configs or code that changed
# (FIDELITY_CACHE= turns it off). The binary is built with -trimpath, so
# any checkout of the same tree builds the same executable and can use the
# same cache entries (the key includes the executable's SHA-256).
FIDELITY_CACHE ?= .cache/validate
FIDELITY_RESULTS = $(sort $(wildcard docs/results/*-gpu*.json))
# What older GPU runs ran that their files do not record: docs/results/fidelity-defaults.txt.
FIDELITY_DEFAULTS = $(foreach d,$(shell grep -v '^\#' docs/results/fidelity-defaults.txt),--scheduler-default '$(d)')

.PHONY: fidelity-page
fidelity-page:
	$(GO) run -trimpath ./cmd/gpusched validate $(FIDELITY_RESULTS) $(FIDELITY_DEFAULTS) --compare-variant datasheet \
		$(if $(FIDELITY_CACHE),--cache $(FIDELITY_CACHE)) \
		--page docs/results/fidelity.md --limits docs/results/fidelity-regression.yaml

# The committed simulator results, their pages and the bad-input golden
# run again after a change to the simulator's model (scripts/sim-results.sh;
# ONLY='GLOB' for some files alone).
.PHONY: sim-results
sim-results:
	GO=$(GO) bash scripts/sim-results.sh
