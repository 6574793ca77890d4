// Command migrate converts results files of the formats before results
// schema 2 (gpusched run's and the paper entry points', experiments/set's
// and experiments/cusync's) into schema 2, in place. Every measured number
// stays as recorded; the file gains the resolved experiment (from the
// experiment file as it was when the rows were committed, restricted to the
// workloads and devices that ran), the rows' positions in that matrix and
// their parameters, and a note of what was converted.
//
//	go run ./experiments/internal/migrate docs/results/*.json
//	go run ./experiments/internal/migrate -config my.yaml -runner "" results/x/results.json
//	go run ./experiments/internal/migrate -pin-configs -rename h100=h100-datasheet docs/results/*-sim.json
//
// Without -config, the experiment file is configs/experiments/<source> at
// the newest commit that changed the file's rows (git history), so a
// results file is described by the configuration that produced it.
//
// -pin-configs takes converted schema-2 files and records the digest of
// the simulator config that made their rows (see pinConfigs), renaming the
// devices -rename lists: a converted file names h100 where today's h100
// is another (calibrated) config, and h100-datasheet is the one that ran.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/experiments"
)

func main() {
	config := flag.String("config", "", "the experiment file the results came from (default: from git history)")
	runner := flag.String("runner", "auto", `the paper whose entry point ran them ("" for gpusched run; auto: from the file name)`)
	pin := flag.Bool("pin-configs", false, "record the digests of the simulator configs that made converted schema-2 files' rows")
	rename := flag.String("rename", "", "with -pin-configs: devices to rename, OLD=NEW,... (h100=h100-datasheet)")
	flag.Parse()
	renames, err := parseRenames(*rename)
	if flag.NArg() == 0 || err != nil || (*rename != "" && !*pin) {
		fmt.Fprintln(os.Stderr, "usage: migrate [-config FILE] [-runner NAME] RESULTS.json...\n       migrate -pin-configs [-rename OLD=NEW,...] RESULTS.json...")
		os.Exit(2)
	}
	failed := false
	for _, path := range flag.Args() {
		var msg string
		var err error
		if *pin {
			msg, err = pinFile(path, renames)
		} else {
			msg, err = migrateFile(path, *config, *runner)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "migrate: %s: %v\n", path, err)
			failed = true
			continue
		}
		fmt.Printf("%s: %s\n", path, msg)
	}
	if failed {
		os.Exit(1)
	}
}

var papers = []string{"acs", "autograph", "cusync", "kesco", "set"}

func parseRenames(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(kv, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("-rename %q: want OLD=NEW", kv)
		}
		out[from] = to
	}
	return out, nil
}

// pinFile records the config digests of a converted schema-2 file, in
// place (pinConfigs).
func pinFile(path string, renames map[string]string) (string, error) {
	r, err := experiments.ReadResults(path)
	if err != nil {
		return "", err
	}
	show := func(commit, file string) ([]byte, error) { return git("show", commit+":"+file) }
	msg, err := pinConfigs(r, renames, show)
	if err != nil {
		return "", err
	}
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	return msg, os.WriteFile(path, append(out, '\n'), 0o644)
}

func migrateFile(path, config, runner string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	old, err := decodeLegacy(data)
	if err != nil {
		return "", err
	}
	if runner == "auto" {
		runner = ""
		base := filepath.Base(path)
		for _, p := range papers {
			if strings.HasPrefix(base, p+"-") {
				runner = p
			}
		}
	}
	cfg, from, err := findConfig(path, old.source, config)
	if err != nil {
		return "", err
	}
	res, err := convert(old, cfg, runner, from)
	if err != nil {
		return "", err
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s format, %d rows, experiment file %s", old.format, len(res.Rows), from), nil
}

// findConfig reads the experiment file: the one given, or the one the
// source names at the newest commit that changed the results' rows.
func findConfig(path, source, config string) ([]byte, string, error) {
	if config != "" {
		data, err := os.ReadFile(config)
		return data, config, err
	}
	commit, err := rowsCommit(path)
	if err != nil {
		return nil, "", err
	}
	name := "configs/experiments/" + filepath.Base(source)
	data, err := git("show", commit+":"+name)
	if err != nil {
		return nil, "", fmt.Errorf("%s at %s: %w", name, commit[:12], err)
	}
	return data, name + " at commit " + commit[:12], nil
}

// rowsCommit is the newest commit that changed path's rows (not only its
// other fields).
func rowsCommit(path string) (string, error) {
	log, err := git("log", "--format=%H", "--", path)
	if err != nil {
		return "", err
	}
	for _, c := range strings.Fields(string(log)) {
		now, err := git("show", c+":"+path)
		if err != nil {
			return "", err
		}
		before, err := git("show", c+"^:"+path)
		if err != nil {
			return c, nil // added here
		}
		if !sameRows(now, before) {
			return c, nil
		}
	}
	return "", fmt.Errorf("not in git history; give -config")
}

func sameRows(a, b []byte) bool {
	var ra, rb struct {
		Rows json.RawMessage `json:"rows"`
	}
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil {
		return false
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, ra.Rows) != nil || json.Compact(&cb, rb.Rows) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

func git(args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
