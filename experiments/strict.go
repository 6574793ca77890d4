package experiments

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// decodeStrict decodes node into v, rejecting every mapping key that has no
// field in v's type. yaml.v3 offers KnownFields only on a Decoder reading
// bytes, not on Node.Decode; re-marshalling the node to use it would renumber
// the lines. So the known-fields check walks the node against v's type here,
// and the values are decoded from the original node, whose lines both kinds
// of error then report. what names the top-level value in messages
// ("experiment", "params of workload w").
func decodeStrict(node *yaml.Node, v any, what string) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decode %s: target must be a non-nil pointer, got %T", what, v)
	}
	if err := checkKnownFields(node, rv.Type().Elem(), what); err != nil {
		return err
	}
	if err := node.Decode(v); err != nil {
		return cleanYAMLError(err, what)
	}
	return nil
}

// LineError is a problem at a line of a YAML file. Callers that know the
// file print it as file:line: message.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// cleanYAMLError turns yaml.v3's "yaml: unmarshal errors:\n  line 7: cannot
// unmarshal ..." into a LineError at line 7.
func cleanYAMLError(err error, what string) error {
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		var line int
		if _, scanErr := fmt.Sscanf(te.Errors[0], "line %d:", &line); scanErr == nil {
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				msgs[i] = m
				if i == 0 {
					_, msgs[i], _ = strings.Cut(m, ": ")
				}
			}
			return &LineError{Line: line, Msg: strings.Join(msgs, "; ") + " in " + what}
		}
		return fmt.Errorf("%s: %s", what, strings.Join(te.Errors, "; "))
	}
	return fmt.Errorf("%s: %w", what, err)
}

var (
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	nodeType        = reflect.TypeOf(yaml.Node{})
)

// checkKnownFields reports the first mapping key under node that t does not
// declare, with its line, the path to it and the fields t does declare.
// checkStructFields checks a mapping against struct type t's fields.
func checkStructFields(node *yaml.Node, t reflect.Type, path string) error {
	if node.Kind != yaml.MappingNode {
		return nil // a type error; Decode reports it with its line
	}
	fields, open := yamlFields(t)
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i], node.Content[i+1]
		if key.Kind == yaml.AliasNode || key.Value == "<<" {
			continue // merge keys are expanded by the decoder
		}
		f, ok := fields[key.Value]
		if !ok {
			if open {
				continue
			}
			known := "it takes no fields"
			if len(fields) > 0 {
				known = "known fields: " + strings.Join(sortedKeys(fields), ", ")
			}
			return &LineError{Line: key.Line, Msg: fmt.Sprintf("unknown field %q in %s (%s)", key.Value, path, known)}
		}
		if err := checkKnownFields(val, f, path+"."+key.Value); err != nil {
			return err
		}
	}
	return nil
}

func checkKnownFields(node *yaml.Node, t reflect.Type, path string) error {
	if node == nil {
		return nil
	}
	switch node.Kind {
	case yaml.DocumentNode:
		if len(node.Content) == 0 {
			return nil
		}
		return checkKnownFields(node.Content[0], t, path)
	case yaml.AliasNode:
		return checkKnownFields(node.Alias, t, path)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decoded as given, or by the type itself
	}
	if node.Kind == yaml.ScalarNode {
		return checkNumber(node, t.Kind(), path)
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkStructFields(node, t, path)
	case reflect.Slice, reflect.Array:
		if node.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range node.Content {
			if err := checkKnownFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			if err := checkKnownFields(node.Content[i+1], t.Elem(), path+"."+node.Content[i].Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlFields maps the YAML keys of struct t to their types, following
// yaml.v3's rules: the tag's name, or the field name lowercased; "-" skips;
// ",inline" merges a struct's fields, or (for a map) accepts any key (open).
func yamlFields(t reflect.Type) (fields map[string]reflect.Type, open bool) {
	fields = map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.PkgPath != "" && !f.Anonymous {
			continue // unexported
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Map {
				open = true
				continue
			}
			sub, subOpen := yamlFields(ft)
			for k, v := range sub {
				fields[k] = v
			}
			open = open || subOpen
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, open
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkNumber rejects numbers yaml.v3 would decode silently into wrong
// values: NaN and infinities into a float, a fraction truncated into an
// int (width: 1.5 became 1), and a negative cost (a *_ns field).
func checkNumber(node *yaml.Node, kind reflect.Kind, path string) error {
	isFloat := kind == reflect.Float32 || kind == reflect.Float64
	isInt := kind >= reflect.Int && kind <= reflect.Uint64
	if !isFloat && (!isInt || node.ShortTag() != "!!float") {
		return nil
	}
	var x float64
	if err := node.Decode(&x); err != nil {
		return nil // a type error; Decode reports it with its line
	}
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return &LineError{Line: node.Line, Msg: fmt.Sprintf("%s is %s; it must be a finite number", path, node.Value)}
	case isInt && x != math.Trunc(x):
		return &LineError{Line: node.Line, Msg: fmt.Sprintf("%s is %s; it must be a whole number", path, node.Value)}
	case strings.HasSuffix(path, "_ns") && x < 0:
		return &LineError{Line: node.Line, Msg: fmt.Sprintf("%s is %s; a cost must not be negative", path, node.Value)}
	}
	return nil
}
