package experiments

import (
	"fmt"
	"strings"
)

// ConfigChanges checks every simulator device a results file names against
// the config of that name today (ConfigDigest): one line for each whose
// config is not the one that made the rows, that records no digest (a file
// converted from an earlier format), or that no longer loads. Rerunning
// such a file would measure another simulated GPU under the same name.
func (r *Results) ConfigChanges() []string {
	if r.Resolved == nil {
		return nil
	}
	var out []string
	for _, d := range r.Resolved.Devices {
		if IsCUDA(d.Spec) {
			continue
		}
		now, err := ConfigDigest(d.Spec)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("device %s: its config no longer loads: %v", d.Spec, err))
		case d.ConfigSHA256 == "":
			out = append(out, fmt.Sprintf("device %s: the results record no config digest, so nothing says that today's %s made their rows", d.Spec, d.Spec))
		case d.ConfigSHA256 != now:
			out = append(out, fmt.Sprintf("device %s: config %s has changed since these rows were made (config sha256 %s in the results, %s now): rerunning measures another simulated GPU",
				d.Spec, d.Spec, short(d.ConfigSHA256), short(now)))
		}
	}
	return out
}

// checkConfigs refuses to run results again whose simulator configs have
// changed (ConfigChanges); name is the results file.
func (r *Results) checkConfigs(name string) error {
	changes := r.ConfigChanges()
	if len(changes) == 0 {
		return nil
	}
	return fmt.Errorf("%s: it would not run as it ran: %s; run its experiment file (%s) for today's configs, or rename the device to the config that made the rows",
		name, strings.Join(changes, "; "), r.Source)
}

// ConfigMismatches lists the simulator devices that a and b name alike but
// ran with different configs (their digests differ), so that their rows,
// joined by device name, compare two simulated GPUs.
func ConfigMismatches(a, b *Results) []string {
	if a.Resolved == nil || b.Resolved == nil {
		return nil
	}
	inB := map[string]string{}
	for _, d := range b.Resolved.Devices {
		inB[d.Spec] = d.ConfigSHA256
	}
	var out []string
	for _, d := range a.Resolved.Devices {
		other, ok := inB[d.Spec]
		if !ok || IsCUDA(d.Spec) || other == d.ConfigSHA256 {
			continue
		}
		out = append(out, fmt.Sprintf("device %s: the two files ran different configs of that name (config sha256 %s and %s)",
			d.Spec, orNone(short(d.ConfigSHA256)), orNone(short(other))))
	}
	return out
}

func orNone(digest string) string {
	if digest == "" {
		return "none recorded"
	}
	return digest
}
