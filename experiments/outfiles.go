package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxNameBytes keeps file names well inside the 255 bytes filesystems
// allow, with room for a suffix and an extension.
const maxNameBytes = 160

// FileNames names files (without extension) for rows or plots, each made
// of parts (workload, scheduler, device, sweep point): the parts reduced to
// lower-case letters, digits, '.', '-' and '_' and joined with "__". Names
// that would coincide for distinct parts ("Small" and "small", two
// non-Latin names, "a"+"x__serial" and "a__x"+"serial"), that reduce to
// nothing or that are too long get a hash of the exact parts, so that
// distinct parts never share a file.
func FileNames(parts [][]string) []string {
	out := make([]string, len(parts))
	owners := map[string]map[string]bool{} // name -> the distinct parts that reduce to it
	for i, p := range parts {
		out[i] = reducedName(p)
		if owners[out[i]] == nil {
			owners[out[i]] = map[string]bool{}
		}
		owners[out[i]][strings.Join(p, "\x00")] = true
	}
	for i, p := range parts {
		name := out[i]
		if len(owners[name]) > 1 || name == "" || len(name) > maxNameBytes {
			if len(name) > maxNameBytes {
				name = name[:maxNameBytes]
			}
			out[i] = strings.TrimSuffix(name+"-"+hash8(strings.Join(p, "\x00")), "-")
			out[i] = strings.TrimPrefix(out[i], "-")
		}
	}
	return out
}

// reducedName is parts reduced as FileNames says, before any hash.
func reducedName(parts []string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		s := sanitize(p)
		for strings.Contains(s, "__") {
			s = strings.ReplaceAll(s, "__", "_")
		}
		out[i] = strings.Trim(s, "-_.")
	}
	return strings.Join(out, "__")
}

func hash8(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

func timelineParts(row *Row) []string {
	parts := []string{row.Workload, row.Scheduler, row.Device}
	if len(row.Point) > 0 {
		parts = append(parts, pointString(row.Point))
	}
	return parts
}

// TimelineFile is the file name of a row's timeline when it runs alone
// (gpusched trace); a run names its rows' timelines with FileNames.
func TimelineFile(row *Row) string { return FileNames([][]string{timelineParts(row)})[0] + ".json" }

// timelineNames names every job's timeline, by row index.
func timelineNames(jobs []*job) map[int]string {
	parts := make([][]string, len(jobs))
	for i, j := range jobs {
		row := j.newRow()
		parts[i] = timelineParts(&row)
	}
	names := FileNames(parts)
	out := make(map[int]string, len(jobs))
	for i, j := range jobs {
		out[j.index] = names[i] + ".json"
	}
	return out
}

// CheckOutDir makes dir (and its parents) and checks that a file can be
// written there, before anything runs: a path that is a file, a directory
// without write permission, or a name too long for the filesystem is found
// at once, not after the run.
func CheckOutDir(dir string) error {
	if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink == 0 && !st.IsDir() {
		return fmt.Errorf("output directory %s is a file", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	probe, err := os.CreateTemp(dir, ".gpusched-probe-*")
	if err != nil {
		return fmt.Errorf("output directory %s: cannot write there: %w", dir, err)
	}
	name := probe.Name()
	if err := probe.Close(); err != nil {
		return err
	}
	return os.Remove(name)
}

// WriteFile writes a file atomically (a temporary file renamed into place,
// so a crash leaves the old file or the new one, never half of one), and
// refuses to write through a symbolic link.
func WriteFile(path string, data []byte) error {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; gpusched does not write through links (remove it)", path)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		return errors.Join(werr, os.Remove(tmp.Name()))
	}
	return nil
}
