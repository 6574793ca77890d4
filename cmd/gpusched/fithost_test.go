package main

import (
	"bytes"
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/calibrate"
	"github.com/gpusched/gpusched/device/sim"
)

// fitHostFields hands fit the reports and the --sim config (after the
// flags more adds are parsed) and prints each field lines picks as a host
// line with the fit's comment; a fit's error is the command's.
func TestFitHostFieldsPrintsTheFittedHostLines(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "callbacks.json")
	status, _, errOut := gpusched(t, "calibrate", "--device", "h100", "--only", "host callbacks", "--raw", part, "--report", filepath.Join(dir, "c.md"))
	require.Equal(t, 0, status, errOut)

	var extra string
	var out bytes.Buffer
	err := fitHostFields([]string{part, "--sim", "h100", "--extra", "x"}, &out, &bytes.Buffer{}, "calibrate fit-test",
		func(rep *calibrate.Report, cfg *sim.Config) (*calibrate.Fitted, error) {
			assert.Equal(t, "x", extra, "the flags more adds are parsed before the fit")
			assert.Equal(t, "h100", cfg.Name)
			assert.NotEmpty(t, rep.Measurements)
			fitted := *cfg
			fitted.Host.HandoffNs, fitted.Host.QueueLockNs = 212.36, 150
			return &calibrate.Fitted{Config: &fitted, Comments: map[string]string{"host.handoff_ns": "the ping-pong less two locks", "host.queue_lock_ns": "fitted"}}, nil
		},
		func(h sim.HostCosts) []hostLine {
			return []hostLine{{"handoff_ns", h.HandoffNs}, {"queue_lock_ns", h.QueueLockNs}}
		},
		func(fs *flag.FlagSet) { fs.StringVar(&extra, "extra", "", "a flag of the command's own") })
	require.NoError(t, err)
	assert.Equal(t, "  handoff_ns: 212.36 # the ping-pong less two locks\n  queue_lock_ns: 150 # fitted\n", out.String())

	out.Reset()
	err = fitHostFields([]string{part, "--sim", "h100"}, &out, &bytes.Buffer{}, "calibrate fit-test",
		func(*calibrate.Report, *sim.Config) (*calibrate.Fitted, error) {
			return nil, errors.New("no such measurement")
		},
		func(sim.HostCosts) []hostLine { t.Error("lines called after a failed fit"); return nil })
	assert.EqualError(t, err, "no such measurement")
	assert.Empty(t, out.String())
}
