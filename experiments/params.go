package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Param describes one parameter of a workload family or a scheduler: its
// name as experiment files spell it (nested fields joined by dots), its
// type and its default.
type Param struct {
	Name, Type, Default string
}

// describeNode is the parameters a factory is called with to describe its
// parameters: DecodeParams answers it with the struct it was about to fill,
// defaults in place, instead of decoding. Every factory decodes its
// parameters with one DecodeParams call, so the struct it passes is the
// whole truth about them.
var describeNode = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!gpusched-describe"}

type describeRequest struct{ v any }

func (*describeRequest) Error() string { return "parameters described, not decoded" }

// paramsStruct calls a factory with describeNode and returns the
// parameter struct (a pointer, holding the defaults) it passed to
// DecodeParams.
func paramsStruct(call func(*yaml.Node) error) (any, error) {
	err := call(describeNode)
	var d *describeRequest
	if errors.As(err, &d) {
		return d.v, nil
	}
	if err == nil {
		return nil, errors.New("its factory never decodes parameters")
	}
	return nil, err
}

func workloadStruct(family string) (any, error) {
	regMu.Lock()
	r, ok := workloadsR[family]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown workload family %q (known: %s)", family, strings.Join(Workloads(), ", "))
	}
	return paramsStruct(func(n *yaml.Node) error { _, err := r.f(n, 0); return err })
}

func schedulerStruct(kind string) (any, error) {
	regMu.Lock()
	r, ok := schedR[kind]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown scheduler kind %q (known: %s)", kind, strings.Join(Schedulers(), ", "))
	}
	return paramsStruct(func(n *yaml.Node) error { _, err := r.f(n); return err })
}

// WorkloadParams and SchedulerParams describe a workload family's or a
// scheduler's parameters, in declaration order.
func WorkloadParams(family string) ([]Param, error) { return describe(workloadStruct(family)) }
func SchedulerParams(kind string) ([]Param, error)  { return describe(schedulerStruct(kind)) }

func describe(v any, err error) ([]Param, error) {
	if err != nil {
		return nil, err
	}
	var out []Param
	walkParams(reflect.ValueOf(v).Elem(), "", func(name string, f reflect.Value) {
		out = append(out, Param{Name: name, Type: typeName(f.Type()), Default: formatParam(f)})
	})
	return out, nil
}

// ResolvedWorkloadParams and ResolvedSchedulerParams are the values every
// parameter takes with params decoded over the defaults, formatted as YAML
// scalars (lists and mappings as JSON).
func ResolvedWorkloadParams(family string, params *yaml.Node) (map[string]string, error) {
	return resolve(workloadStruct(family))(params)
}

func ResolvedSchedulerParams(kind string, params *yaml.Node) (map[string]string, error) {
	return resolve(schedulerStruct(kind))(params)
}

func resolve(v any, err error) func(*yaml.Node) (map[string]string, error) {
	return func(params *yaml.Node) (map[string]string, error) {
		if err != nil {
			return nil, err
		}
		if err := DecodeParams(params, v); err != nil {
			return nil, err
		}
		out := map[string]string{}
		walkParams(reflect.ValueOf(v).Elem(), "", func(name string, f reflect.Value) { out[name] = formatParam(f) })
		return out, nil
	}
}

// walkParams calls fn for every parameter of struct s, as yaml.v3 names
// its fields: the yaml tag's name or the lower-cased field name; inline
// and nested structs are walked (nested names joined by dots).
func walkParams(s reflect.Value, prefix string, fn func(string, reflect.Value)) {
	if s.Kind() != reflect.Struct {
		return
	}
	t := s.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		f := s.Field(i)
		switch {
		case strings.Contains(opts, "inline"):
			walkParams(f, prefix, fn)
		case f.Kind() == reflect.Struct && !implementsUnmarshaler(f):
			walkParams(f, prefix+name+".", fn)
		default:
			fn(prefix+name, f)
		}
	}
}

func implementsUnmarshaler(v reflect.Value) bool {
	_, ok := v.Addr().Interface().(yaml.Unmarshaler)
	return ok
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "mapping of " + typeName(t.Key()) + " to " + typeName(t.Elem())
	case reflect.Pointer:
		return typeName(t.Elem()) + " (optional)"
	}
	return t.Kind().String()
}

// formatParam writes a value as a YAML scalar would read: strings bare,
// numbers and booleans as Go prints them, lists and mappings as JSON (with
// sorted keys), nil pointers as null.
func formatParam(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Pointer:
		if v.IsNil() {
			return "null"
		}
		return formatParam(v.Elem())
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return fmt.Sprint(v.Interface())
		}
		return string(b)
	}
	return fmt.Sprint(v.Interface())
}

// sortedParamNames is the union of the keys of ms, sorted.
func sortedParamNames(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
