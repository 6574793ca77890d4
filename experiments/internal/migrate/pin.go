package main

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/configs"
	"github.com/gpusched/gpusched/experiments"
)

// convertedAt finds the commit a conversion note names ("... at commit
// 5bd7c3e223cf ..."): the experiment file's, and so the rows', commit.
var convertedAt = regexp.MustCompile(`at commit ([0-9a-f]{7,40})`)

// pinConfigs records in r, a results file converted from an earlier
// format, which of today's simulator configs made its rows. Each simulator
// device is renamed as renames says (h100: h100-datasheet) and gets the
// digest of today's config of that name (experiments.ConfigDigest), once
// that config is checked to be, name and comments aside, the config the
// device named at the commit that made the rows. A device whose config has
// changed since is an error: no config of today made those rows.
func pinConfigs(r *experiments.Results, renames map[string]string, show func(commit, path string) ([]byte, error)) (string, error) {
	m := convertedAt.FindStringSubmatch(r.Migrated)
	if m == nil {
		return "", fmt.Errorf("not converted from an earlier format (or its note names no commit): its configs are recorded as it ran")
	}
	commit := m[1]
	var done []string
	for i := range r.Resolved.Devices {
		d := &r.Resolved.Devices[i]
		if experiments.IsCUDA(d.Spec) || d.ConfigSHA256 != "" {
			continue
		}
		to := d.Spec
		if n, ok := renames[d.Spec]; ok {
			to = n
		}
		then, err := show(commit, "configs/devices/"+d.Spec+".yaml")
		if err != nil {
			return "", fmt.Errorf("device %s at commit %s: %w", d.Spec, commit, err)
		}
		now, err := configs.FS.ReadFile("devices/" + to + ".yaml")
		if err != nil {
			return "", fmt.Errorf("device %s: no config %s today", d.Spec, to)
		}
		differ, err := configDifferences(then, now)
		if err != nil {
			return "", fmt.Errorf("device %s: %w", d.Spec, err)
		}
		if len(differ) > 0 {
			return "", fmt.Errorf("device %s at commit %s is not today's %s: %s differ", d.Spec, commit, to, strings.Join(differ, ", "))
		}
		digest, err := experiments.ConfigDigest(to)
		if err != nil {
			return "", err
		}
		renameDevice(r, d.Spec, to)
		d.Spec, d.ConfigSHA256 = to, digest
		done = append(done, to)
	}
	if len(done) == 0 {
		return "", fmt.Errorf("no simulator device without a config digest")
	}
	note := fmt.Sprintf("the rows' simulator configs are today's %s (the configs the file named at commit %s, name and comments aside)",
		strings.Join(done, " and "), commit)
	var renamed []string
	for from, to := range renames {
		for _, d := range done {
			if d == to {
				renamed = append(renamed, from+" as "+to)
			}
		}
	}
	if len(renamed) > 0 {
		sort.Strings(renamed)
		note += "; renamed " + strings.Join(renamed, ", ") + ", since the config of the old name has changed"
	}
	r.Migrated += "; " + note
	r.Digest = r.Resolved.Digest()
	return note, nil
}

// renameDevice renames device from to in r's rows and probes.
func renameDevice(r *experiments.Results, from, to string) {
	for i := range r.Rows {
		if r.Rows[i].Device == from {
			r.Rows[i].Device = to
		}
	}
	for i := range r.Probes {
		if r.Probes[i].Device == from {
			r.Probes[i].Device = to
		}
	}
}

// configDifferences lists the fields (dotted paths) in which two device
// config files differ, their names and comments aside.
func configDifferences(a, b []byte) ([]string, error) {
	var ma, mb map[string]any
	if err := yaml.Unmarshal(a, &ma); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(b, &mb); err != nil {
		return nil, err
	}
	delete(ma, "name")
	delete(mb, "name")
	fa, fb := map[string]any{}, map[string]any{}
	flattenConfig("", ma, fa)
	flattenConfig("", mb, fb)
	var out []string
	for k, v := range fa {
		if w, ok := fb[k]; !ok || !reflect.DeepEqual(v, w) {
			out = append(out, k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func flattenConfig(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			flattenConfig(prefix+k+".", sub, out)
			continue
		}
		out[prefix+k] = v
	}
}
