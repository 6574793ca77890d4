package kineto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// etTensor is one tensor argument of an execution-trace operator: its
// storage (the observer keys storages by data pointer, so a storage id is
// an address the caching allocator may hand out again), its offset into the
// storage and extent in elements, and its element size.
type etTensor struct {
	storage  int64
	offset   int64 // elements
	extent   int64 // elements from offset the tensor can touch
	itemsize int64
	device   string
}

// etNode is one operator of an execution trace.
type etNode struct {
	id, parent int64
	rfID       int64
	name       string
	schema     string
	inputs     [][]etTensor // per argument, the tensors in it (none for scalars)
	outputs    [][]etTensor
	leaf       bool
}

// parseET reads a PyTorch execution trace (torch.profiler.ExecutionTraceObserver),
// in the 1.0 layout (inputs as lists, rf_id and op_schema as fields) or the
// 1.1 layout (inputs as {values, shapes, types, strides}, the rest in attrs).
func parseET(data []byte) ([]*etNode, error) {
	var raw struct {
		Schema string                       `json:"schema"`
		Nodes  []map[string]json.RawMessage `json:"nodes"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not an execution trace (JSON with nodes): %w", err)
	}
	if len(raw.Nodes) == 0 {
		return nil, fmt.Errorf("the execution trace has no nodes")
	}
	nodes := make([]*etNode, 0, len(raw.Nodes))
	hasChild := map[int64]bool{}
	for i, m := range raw.Nodes {
		n, err := parseNode(m)
		if err != nil {
			return nil, fmt.Errorf("execution trace node %d: %w", i, err)
		}
		if n.parent != n.id {
			hasChild[n.parent] = true
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		n.leaf = !hasChild[n.id]
	}
	return nodes, nil
}

func num(raw json.RawMessage) int64 {
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		return -1
	}
	return int64(f)
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s) // absent or not a string: ""
	return s
}

func parseNode(m map[string]json.RawMessage) (*etNode, error) {
	n := &etNode{id: num(m["id"]), name: str(m["name"]), rfID: -1}
	if n.id < 0 {
		return nil, fmt.Errorf("no id")
	}
	n.parent = num(m["parent"])
	if n.parent < 0 {
		n.parent = num(m["ctrl_deps"])
	}
	if _, ok := m["rf_id"]; ok { // 1.0 layout
		n.rfID, n.schema = num(m["rf_id"]), str(m["op_schema"])
		n.inputs = tensorArgs(m["inputs"], m["input_shapes"], m["input_types"], nil)
		n.outputs = tensorArgs(m["outputs"], m["output_shapes"], m["output_types"], nil)
		return n, nil
	}
	var attrs []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	}
	_ = json.Unmarshal(m["attrs"], &attrs) // a node without attrs keeps rf_id -1
	for _, a := range attrs {
		switch a.Name {
		case "rf_id":
			n.rfID = num(a.Value)
		case "op_schema":
			n.schema = str(a.Value)
		}
	}
	for _, io := range []struct {
		key string
		dst *[][]etTensor
	}{{"inputs", &n.inputs}, {"outputs", &n.outputs}} {
		var v struct {
			Values, Shapes, Types, Strides json.RawMessage
		}
		if err := json.Unmarshal(m[io.key], &v); err != nil {
			return nil, fmt.Errorf("%s: %w", io.key, err)
		}
		*io.dst = tensorArgs(v.Values, v.Shapes, v.Types, v.Strides)
	}
	return n, nil
}

// tensorArgs splits the argument list into the tensors of each argument.
func tensorArgs(values, shapes, types, strides json.RawMessage) [][]etTensor {
	var vs, ss, ts, sts []json.RawMessage
	_ = json.Unmarshal(values, &vs) // absent lists leave the argument without tensors
	_ = json.Unmarshal(shapes, &ss)
	_ = json.Unmarshal(types, &ts)
	_ = json.Unmarshal(strides, &sts)
	out := make([][]etTensor, len(vs))
	for i, v := range vs {
		if i < len(ts) && !strings.Contains(str(ts[i]), "Tensor") {
			continue
		}
		out[i] = collect(v, at(ss, i), at(sts, i), nil)
	}
	return out
}

func at(list []json.RawMessage, i int) json.RawMessage {
	if i < len(list) {
		return list[i]
	}
	return nil
}

// collect walks a value (a tensor, or lists of them) with its shapes and
// strides alongside, appending the tensors found.
func collect(v, shape, stride json.RawMessage, dst []etTensor) []etTensor {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return dst
	}
	if t, ok := asTensor(items); ok {
		t.extent = extent(t.extent, shape, stride)
		return append(dst, t)
	}
	var shs, sts []json.RawMessage
	_ = json.Unmarshal(shape, &shs) // missing shapes or strides: extents from numel
	_ = json.Unmarshal(stride, &sts)
	for i, item := range items {
		dst = collect(item, at(shs, i), at(sts, i), dst)
	}
	return dst
}

// asTensor recognizes [tensor id, storage id, offset, numel, itemsize, device].
func asTensor(items []json.RawMessage) (etTensor, bool) {
	if len(items) != 6 {
		return etTensor{}, false
	}
	dev := str(items[5])
	if dev == "" {
		return etTensor{}, false
	}
	for _, it := range items[:5] {
		if num(it) < 0 {
			return etTensor{}, false
		}
	}
	return etTensor{storage: num(items[1]), offset: num(items[2]), extent: num(items[3]), itemsize: num(items[4]), device: dev}, true
}

// extent is how many elements from its offset a tensor of numel elements
// can touch: 1 + sum((size-1)*stride) when shape and strides are known
// (less than numel for broadcast views, more for strided ones), else numel.
func extent(numel int64, shape, stride json.RawMessage) int64 {
	var sh, st []int64
	if numel <= 0 || json.Unmarshal(shape, &sh) != nil || json.Unmarshal(stride, &st) != nil || len(sh) != len(st) || len(sh) == 0 {
		return numel
	}
	e := int64(1)
	for i := range sh {
		if sh[i] <= 0 || st[i] < 0 {
			return numel
		}
		e += (sh[i] - 1) * st[i]
	}
	return e
}

var (
	writeAnnotation = regexp.MustCompile(`\([a-z][a-z0-9]*!\)`)
	aliasAnnotation = regexp.MustCompile(`\([a-z][a-z0-9]*!?\)`)
)

// schemaEffects reads an operator schema such as
// "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
// and reports which arguments it writes (annotated "!") and which results
// alias an argument (annotated "(a)" or "(a!)") rather than being new.
func schemaEffects(schema string) (mutated []bool, aliased []bool, ok bool) {
	args, rets, ok := schemaParts(schema)
	if !ok {
		return nil, nil, false
	}
	for _, a := range args {
		mutated = append(mutated, writeAnnotation.MatchString(a))
	}
	for _, r := range rets {
		aliased = append(aliased, aliasAnnotation.MatchString(r))
	}
	return mutated, aliased, true
}

// schemaParts splits a schema into its arguments (without the "*" that
// starts keyword-only ones) and its results.
func schemaParts(schema string) (args, rets []string, ok bool) {
	open := strings.IndexByte(schema, '(')
	arrow := strings.LastIndex(schema, "->")
	if open < 0 || arrow < open {
		return nil, nil, false
	}
	argText := schema[open+1 : arrow]
	if i := strings.LastIndexByte(argText, ')'); i >= 0 {
		argText = argText[:i]
	}
	for _, a := range splitTop(argText) {
		if strings.TrimSpace(a) != "*" {
			args = append(args, a)
		}
	}
	ret := strings.TrimSpace(schema[arrow+2:])
	if strings.HasPrefix(ret, "(") && strings.HasSuffix(ret, ")") {
		ret = ret[1 : len(ret)-1]
	}
	return args, splitTop(ret), true
}

// splitTop splits at commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}
