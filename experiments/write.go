package experiments

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write writes r into dir in the given formats (md, csv, json, svg, pdf)
// and returns the files written, in a fixed order.
func Write(dir string, r *Results, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var order []string
	add := func(name string, data []byte) {
		files[name] = data
		order = append(order, name)
	}
	var figFormats []string
	for _, f := range formats {
		switch f {
		case "json":
			b, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				return nil, err
			}
			add("results.json", append(b, '\n'))
		case "csv":
			b, err := CSV(r)
			if err != nil {
				return nil, err
			}
			add("results.csv", b)
			if b, err = RepetitionsCSV(r); err != nil {
				return nil, err
			}
			add("results-reps.csv", b)
		case "md":
			add("results.md", Markdown(r, contains(formats, "svg")))
		case "svg", "pdf":
			figFormats = append(figFormats, f)
		default:
			return nil, fmt.Errorf("unknown output format %q (known: %s)", f, strings.Join(allFormats, ", "))
		}
	}
	if len(figFormats) > 0 {
		plots, err := Plots(r, figFormats)
		if err != nil {
			return nil, err
		}
		for _, p := range plots {
			add(p.File, p.Data)
		}
	}
	var paths []string
	for _, name := range order {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, files[name]); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func rowLabel(row *Row) string {
	s := fmt.Sprintf("%s / %s / %s", row.Workload, row.Scheduler, row.Device)
	if len(row.Point) > 0 {
		s += " at " + pointString(row.Point)
	}
	return s
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// Distinct lists key(row) over rows, first-seen order: a results set's
// devices, workloads or schedulers in the order they ran.
func Distinct(rows []Row, key func(*Row) string) []string {
	seen := map[string]bool{}
	var out []string
	for i := range rows {
		k := key(&rows[i])
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
