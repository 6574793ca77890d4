package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// simCacheFormat names the layout of a cached file's rows: a change to what
// is cached or to the key changes it.
const simCacheFormat = "gpusched validate sim cache 2"

// simCacheKey is everything a file's simulated rows depend on: the
// arguments of the Run that simulates them, and what Run reads besides. Its
// SHA-256 names the cache entry (ValidateOptions.Cache). A row is served
// only when every part is equal:
//   - Build: the SHA-256 of the running executable (buildDigest). Not the
//     VCS revision: `go run` does not stamp one, and a dirty tree has
//     the revision of other code; the executable's bytes change with any
//     code change (the Go toolchain builds the same bytes from the same
//     sources, so an unchanged tree keeps its entries), and embed the
//     built-in configs and profiles.
//   - Simulated: the Resolved digest of the experiment Run gets (seed,
//     workloads, schedulers with the scheduler defaults applied, one
//     repetition, the results file's sweep; its devices are the configs
//     below), and Source, the experiment file it names.
//   - Experiment: the SHA-256 of ValidateOptions.Experiment's file, if
//     given.
//   - Configs and ConfigDigests: the config of each GPU name, and each
//     config's ConfigDigest (the config and its kernel profile as the
//     simulator loads them, from a path or built in).
//   - Variant, Defaults, HostSpeed: the options that chose them.
//   - Files: the SHA-256 of every existing file a string of the
//     simulated experiment names (a file workload's path).
//
// The GPU's measurements are not in it: Run never sees them, so a rerun
// of the same experiment on the same GPU model (acs-gpu-confirm and its
// -r2, -r3) shares one entry, and a results file edited only in its
// measurements is joined again without simulating.
type simCacheKey struct {
	Format        string                       `json:"format"`
	Build         string                       `json:"build"`
	Source        string                       `json:"source"`
	Experiment    string                       `json:"experiment,omitempty"`
	Simulated     string                       `json:"simulated"`
	Configs       map[string]string            `json:"configs"`
	ConfigDigests map[string]string            `json:"config_digests"`
	Variant       string                       `json:"variant,omitempty"`
	Defaults      map[string]map[string]string `json:"defaults,omitempty"`
	HostSpeed     bool                         `json:"host_speed,omitempty"`
	Files         map[string]string            `json:"files,omitempty"`
}

// buildDigest is the SHA-256 of the running executable (a test replaces
// it).
var buildDigest = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("validate cache: the running executable: %w", err)
	}
	return fileSHA256(exe)
})

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close() //nolint:errcheck // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// simCacheKeyOf is the cache key of sub run with sweep on configOf's
// configs.
func simCacheKeyOf(sub *Experiment, sweep []SweepParam, configOf map[string]string, opt ValidateOptions) (string, error) {
	k := simCacheKey{Format: simCacheFormat, Source: sub.Source, Configs: configOf, ConfigDigests: map[string]string{}, Variant: opt.SimVariant,
		Defaults: opt.SchedulerDefaults, HostSpeed: opt.HostSpeed, Files: map[string]string{}}
	var err error
	if k.Build, err = buildDigest(); err != nil {
		return "", err
	}
	if opt.Experiment != "" {
		if k.Experiment, err = fileSHA256(opt.Experiment); err != nil {
			return "", err
		}
	}
	for _, spec := range configOf {
		if k.ConfigDigests[spec], err = opt.configDigest(spec); err != nil {
			return "", err
		}
	}
	noDevices := *sub // the configs are in ConfigDigests: Resolve would digest them again
	noDevices.Devices = nil
	r, err := Resolve(&noDevices, sweep, "")
	if err != nil {
		return "", err
	}
	k.Simulated = r.Digest()
	var doc any
	if err := json.Unmarshal([]byte(mustJSON(r)), &doc); err != nil {
		return "", err
	}
	strs := jsonStrings(doc, nil)
	sort.Strings(strs) // a file that fails to read is named the same every run
	for _, s := range strs {
		if st, err := os.Stat(s); err == nil && st.Mode().IsRegular() {
			if k.Files[s], err = fileSHA256(s); err != nil {
				return "", err
			}
		}
	}
	b, err := json.Marshal(k) // map keys sorted
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a Resolved holds only strings, numbers and valid raw JSON
	}
	return string(b)
}

// jsonStrings appends every string of a decoded JSON document, in no
// particular order (a JSON object's members come in map order).
func jsonStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	}
	return out
}

// configDigest is ConfigDigest(spec), computed once per ValidateFiles
// (a config loads in tens of milliseconds; every file names one).
func (opt *ValidateOptions) configDigest(spec string) (string, error) {
	if opt.digests == nil {
		return ConfigDigest(spec)
	}
	type result struct {
		digest string
		err    error
	}
	r, ok := opt.digests.Load(spec)
	if !ok {
		d, err := ConfigDigest(spec)
		r, _ = opt.digests.LoadOrStore(spec, result{d, err})
	}
	return r.(result).digest, r.(result).err
}

// simCachePath is where key's rows are kept.
func simCachePath(dir, key string) string { return filepath.Join(dir, key+".json") }

// readSimCache is the cached rows of key; nil when there are none or they
// do not read back (they are simulated again).
func readSimCache(dir, key string) *Results {
	data, err := os.ReadFile(simCachePath(dir, key))
	if err != nil {
		return nil
	}
	r, err := ParseResults(data, key)
	if err != nil {
		return nil
	}
	return r
}

// writeSimCache keeps r under key (WriteFile: written whole, then renamed
// into place, so a reader never sees part of it).
func writeSimCache(dir, key string, r *Results) error {
	data, err := json.Marshal(r)
	if err != nil { // not a results file (a NaN): simulated again next time
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return WriteFile(simCachePath(dir, key), data)
}
