package experiments

import (
	"bufio"
	"fmt"
	"os"
	pathpkg "path"
	"path/filepath"
	"sort"
	"strings"
)

// SchedulerDefaults are ValidateOptions.SchedulerDefaults as they are
// written: one KIND.PARAM=VALUE or FILEGLOB:KIND.PARAM=VALUE at a time
// (Set, the --scheduler-default flag) or a file of them
// (LoadSchedulerDefaults, docs/results/fidelity-defaults.txt).
type SchedulerDefaults map[string]map[string]string

// String lists the defaults in Set's form, sorted.
func (d SchedulerDefaults) String() string {
	var out []string
	for k, ps := range d {
		for p, v := range ps {
			if glob, kind, ok := strings.Cut(k, ":"); ok {
				out = append(out, glob+":"+kind+"."+p+"="+v)
			} else {
				out = append(out, k+"."+p+"="+v)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// Set adds one default, KIND.PARAM=VALUE or FILEGLOB:KIND.PARAM=VALUE.
func (d SchedulerDefaults) Set(s string) error {
	kp, v, ok := strings.Cut(s, "=")
	glob, kp, hasGlob := strings.Cut(kp, ":")
	if !hasGlob {
		kp, glob = glob, ""
	}
	kind, param, ok2 := strings.Cut(kp, ".")
	if !ok || !ok2 || kind == "" || param == "" || v == "" || (hasGlob && glob == "") {
		return fmt.Errorf("want KIND.PARAM=VALUE or FILEGLOB:KIND.PARAM=VALUE (for example set.warm=false, 'heldout1[0-6]-set-gpu*.json:queue.per_run_threads=true'), got %q", s)
	}
	if hasGlob {
		if _, err := pathpkg.Match(glob, ""); err != nil {
			return fmt.Errorf("%q: bad file pattern %q: %w", s, glob, err)
		}
		kind = glob + ":" + kind
	}
	if d[kind] == nil {
		d[kind] = map[string]string{}
	}
	d[kind][param] = v
	return nil
}

// LoadSchedulerDefaults reads a file of defaults, one Set argument a line;
// blank lines and lines starting with # are skipped. The fidelity page and
// its regression test read the same file, so both simulate the older GPU
// runs as they ran.
func LoadSchedulerDefaults(path string) (SchedulerDefaults, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read only
	d := SchedulerDefaults{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := d.Set(line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// defaultsFor is the scheduler defaults that apply to the results file at
// file: the kinds without a file pattern, and those written GLOB:KIND whose
// GLOB matches the file's base name (a pattern's value wins over the plain
// kind's for the same parameter).
func defaultsFor(all map[string]map[string]string, file string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	set := func(kind string, params map[string]string) {
		if out[kind] == nil {
			out[kind] = map[string]string{}
		}
		for k, v := range params {
			out[kind][k] = v
		}
	}
	for _, kind := range sortedKeys(all) {
		if !strings.Contains(kind, ":") {
			set(kind, all[kind])
		}
	}
	for _, key := range sortedKeys(all) {
		glob, kind, ok := strings.Cut(key, ":")
		if !ok {
			continue
		}
		match, err := pathpkg.Match(glob, pathpkg.Base(filepath.ToSlash(file)))
		if err != nil {
			return nil, fmt.Errorf("scheduler default %q: bad file pattern: %w", key, err)
		}
		if match {
			set(kind, all[key])
		}
	}
	return out, nil
}
