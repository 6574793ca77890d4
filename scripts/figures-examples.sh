#!/bin/sh
# Regenerates the example figures in docs/figures: a simulator sweep with
# two schedulers (bars and the speedup against the swept width), the ACS
# simulator results with 30 schedulers on two devices (small multiples),
# and cuSync GPU results with 95% intervals from 30 paired repetitions.
# Each figure is kept as SVG and PDF and rendered to PNG with rsvg-convert
# (Debian: librsvg2-bin). Run from the repository root.
set -eu
command -v rsvg-convert >/dev/null || { echo "rsvg-convert not found: apt-get install librsvg2-bin" >&2; exit 1; }
out=docs/figures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gpusched" ./cmd/gpusched
"$tmp/gpusched" sweep $out/example-sweep.yaml --param workloads.synthetic.width=2,4,8,16,32 --param seed=1,2,3 -o "$tmp/sweep" >/dev/null
"$tmp/gpusched" replot docs/results/acs-sim.json -o "$tmp/acs" --formats svg,pdf >/dev/null
"$tmp/gpusched" replot docs/results/cusync-gpu-confirm.json -o "$tmp/cusync" --formats svg,pdf >/dev/null
keep() { # keep SRC-without-extension NAME
	for ext in svg pdf; do cp "$1.$ext" "$out/$2.$ext"; done
	rsvg-convert -d 110 -p 110 "$out/$2.svg" -o "$out/$2.png"
}
keep "$tmp/sweep/speedup-synthetic" sweep-2-schedulers-bars
keep "$tmp/sweep/sweep-synthetic-width" sweep-2-schedulers-lines
keep "$tmp/acs/speedup-ant" acs-sim-30-schedulers-ant
keep "$tmp/cusync/speedup-gpt3-t-768" cusync-gpu-gpt3-t-768
echo "wrote $(ls $out | wc -l) files in $out"
