package kineto

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads/file"
)

// traceBuilder writes small Kineto traces by hand: CPU spans on thread 1,
// GPU operations with their launch calls.
type traceBuilder struct {
	events []map[string]any
	corr   int
}

func (b *traceBuilder) cpu(cat, name string, ts, dur float64, args map[string]any) {
	b.events = append(b.events, map[string]any{"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})
}

// launch adds a runtime call at ts and a kernel on stream from start for
// dur microseconds; it returns the correlation id.
func (b *traceBuilder) launch(call string, ts float64, name string, stream int, start, dur float64) int {
	b.corr++
	b.cpu("cuda_runtime", call, ts, 1, map[string]any{"correlation": b.corr})
	b.kernel(name, b.corr, stream, start, dur)
	return b.corr
}

func (b *traceBuilder) kernel(name string, corr, stream int, start, dur float64) {
	b.events = append(b.events, map[string]any{"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": start, "dur": dur,
		"args": map[string]any{"stream": stream, "correlation": corr, "device": 0, "registers per thread": 32, "shared memory": 0,
			"grid": []int{4, 1, 1}, "block": []int{128, 1, 1}}})
}

func (b *traceBuilder) json(t *testing.T) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"deviceProperties": []map[string]any{{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
			"maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerMultiprocessor": 65536, "warpSize": 32,
			"sharedMemPerMultiprocessor": 233472, "sharedMemPerBlockOptin": 232448, "numSms": 132}},
		"traceEvents": b.events})
	require.NoError(t, err)
	return data
}

func opsByName(f *file.File) map[string]*file.Op {
	m := map[string]*file.Op{}
	for i := range f.Steps[0].Ops {
		o := &f.Steps[0].Ops[i]
		m[o.Name()] = o
	}
	return m
}

func TestStreamOrderAndWaitsWithoutET(t *testing.T) {
	b := &traceBuilder{}
	for step, base := range []float64{1000, 2000} {
		b.cpu("user_annotation", fmt.Sprintf("ProfilerStep#%d", step+1), base, 500, nil)
		b.cpu("cpu_op", "aten::conv2d", base+10, 20, nil)
		b.launch("cudaLaunchKernel", base+15, "void at::native::conv_kernel<float>(float*)", 7, base+100, 10)
		b.launch("cudaLaunchKernel", base+30, "void cutlass::Kernel<gemm>(Params)", 7, base+120, 20)
		b.launch("cudaLaunchKernel", base+40, "sm90_xmma_gemm", 20, base+110, 20)
		b.corr++ // cudaEventRecord on stream 7 after the first two kernels
		b.cpu("cuda_runtime", "cudaEventRecord", base+45, 1, map[string]any{"correlation": b.corr})
		rec := b.corr
		b.corr++
		b.cpu("cuda_runtime", "cudaStreamWaitEvent", base+46, 1, map[string]any{"correlation": b.corr})
		b.events = append(b.events, map[string]any{"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": base + 46, "dur": 1,
			"args": map[string]any{"stream": 20, "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": rec, "correlation": b.corr}})
		b.launch("cudaLaunchKernel", base+50, "void add_kernel(float*)", 20, base+150, 5)
		b.corr++
		b.cpu("cuda_runtime", "cudaMemcpyAsync", base+60, 1, map[string]any{"correlation": b.corr})
		b.events = append(b.events, map[string]any{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 20,
			"ts": base + 160, "dur": 3, "args": map[string]any{"stream": 20, "correlation": b.corr, "device": 0, "bytes": 4096}})
	}
	f, rep, err := Import(b.json(t), nil, Options{Iteration: 1, ClockHz: 1_980_000_000})
	require.NoError(t, err)
	assert.Equal(t, "ProfilerStep#1", rep.Window)
	assert.Equal(t, 4, rep.Kernels)
	assert.Equal(t, 1, rep.Copies)
	assert.Equal(t, 2, rep.Streams)
	assert.Equal(t, 5, rep.StreamOrdered)
	ops := opsByName(f)
	require.Len(t, ops, 5)
	assert.Contains(t, ops, "k0.conv_kernel")
	assert.Contains(t, ops, "k1.Kernel")
	assert.Equal(t, "aten::conv2d", ops["k0.conv_kernel"].Label)
	assert.Equal(t, []string{"k0.conv_kernel"}, ops["k1.Kernel"].After, "stream 7's order")
	assert.Empty(t, ops["k2.sm90_xmma_gemm"].After, "first on stream 20")
	assert.Equal(t, []string{"k1.Kernel", "k2.sm90_xmma_gemm"}, ops["k3.add_kernel"].After, "stream 20's order and the wait on stream 7")
	assert.Equal(t, []string{"k3.add_kernel"}, ops["c4.DtoH"].After)
	assert.Equal(t, int64(10000), ops["k0.conv_kernel"].DurationNS)
	assert.Equal(t, int64(4096), ops["c4.DtoH"].Bytes)
	assert.Equal(t, 132, f.Device.SMs)
	assert.Equal(t, 1024, f.Device.SharedReserved)

	last, rep2, err := Import(b.json(t), nil, Options{Iteration: -1, ClockHz: 1})
	require.NoError(t, err)
	assert.Equal(t, "ProfilerStep#2", rep2.Window, "the last step by default")
	assert.Equal(t, int64(10000), last.Steps[0].Ops[0].DurationNS)

	_, _, err = Import(b.json(t), nil, Options{Iteration: 5, ClockHz: 1})
	assert.ErrorContains(t, err, "no ProfilerStep#5 in the trace (it has #1, #2)")
	_, _, err = Import(b.json(t), nil, Options{Iteration: 1})
	assert.ErrorContains(t, err, "does not give NVIDIA H100 80GB HBM3's SM clock")
	_, _, err = Import([]byte(`{"traceEvents": [`), nil, Options{ClockHz: 1})
	assert.ErrorContains(t, err, "not a Kineto trace")
}

func TestGraphLaunchKernelsAreOrderedByTheRecording(t *testing.T) {
	b := &traceBuilder{}
	b.cpu("user_annotation", "ProfilerStep#0", 0, 100, nil)
	corr := b.launch("cudaGraphLaunch", 10, "void a(float*)", 7, 100, 10)
	b.kernel("void b(float*)", corr, 7, 112, 8)                   // after a
	b.kernel("void c(float*)", corr, 7, 112, 6)                   // after a, alongside b
	b.kernel("void d(float*)", corr, 7, 122, 8)                   // after b and c
	b.launch("cudaLaunchKernel", 20, "void e(float*)", 7, 140, 5) // after the graph on the stream
	f, rep, err := Import(b.json(t), nil, Options{Iteration: 0, ClockHz: 1})
	require.NoError(t, err)
	assert.Equal(t, 4, rep.GraphKernels)
	assert.Equal(t, 1, rep.GraphLaunches)
	ops := opsByName(f)
	assert.Empty(t, ops["k0.a"].After)
	assert.Equal(t, []string{"k0.a"}, ops["k1.b"].After)
	assert.Equal(t, []string{"k0.a"}, ops["k2.c"].After, "c ran alongside b: both follow a, neither the other")
	assert.Equal(t, []string{"k1.b", "k2.c"}, ops["k3.d"].After, "d follows the two that ended before it, not a through them")
	assert.Equal(t, []string{"k3.d"}, ops["k4.e"].After, "the next launch on the stream follows the graph's last kernel")
}

// et builds a 1.1-layout execution trace node.
func etNodeJSON(id, rf int, name, schema string, inputs, outputs [][]any, parent ...int) map[string]any {
	ctrl := 1
	if len(parent) > 0 {
		ctrl = parent[0]
	}
	vals := func(ts [][]any) map[string]any {
		values, types := []any{}, []any{}
		for _, t := range ts {
			values = append(values, t)
			types = append(types, "Tensor(float)")
		}
		return map[string]any{"values": values, "shapes": []any{}, "types": types, "strides": []any{}}
	}
	return map[string]any{"id": id, "name": name, "ctrl_deps": ctrl, "inputs": vals(inputs), "outputs": vals(outputs),
		"attrs": []any{map[string]any{"name": "rf_id", "type": "uint64", "value": rf},
			map[string]any{"name": "op_schema", "type": "string", "value": schema}}}
}

func tensor(storage, numel int) []any { return []any{storage * 10, storage, 0, numel, 4, "cuda:0"} }

func TestExecutionTraceGivesDataDependencies(t *testing.T) {
	b := &traceBuilder{}
	var nodes []any
	op := func(rf int, name, schema string, ts float64, inputs, outputs [][]any, kernels ...string) {
		b.cpu("cpu_op", name, ts, 20, map[string]any{"Record function id": rf})
		for i, k := range kernels {
			b.launch("cudaLaunchKernel", ts+5+float64(i), k, 7, 1000+ts*10+float64(i), 10)
		}
		nodes = append(nodes, etNodeJSON(rf+100, rf, name, schema, inputs, outputs))
	}
	fresh := "aten::op(Tensor self) -> Tensor"
	b.cpu("user_annotation", "ProfilerStep#3", 0, 1000, nil)
	op(1, "aten::a", fresh, 10, [][]any{tensor(1, 64)}, [][]any{tensor(2, 64)}, "void ka()")
	op(2, "aten::b", fresh, 40, [][]any{tensor(2, 64)}, [][]any{tensor(3, 64)}, "void kb()")
	// c reuses storage 2 (the allocator handed a's freed block out again):
	// it does not depend on a or b.
	op(3, "aten::c", fresh, 70, [][]any{tensor(1, 64)}, [][]any{tensor(2, 64)}, "void kc()", "void kc_tail()")
	op(4, "aten::d", "aten::add(Tensor self, Tensor other) -> Tensor", 100, [][]any{tensor(3, 64), tensor(2, 64)}, [][]any{tensor(4, 64)}, "void kd()")
	op(5, "aten::relu_", "aten::relu_(Tensor(a!) self) -> Tensor(a!)", 130, [][]any{tensor(4, 64)}, [][]any{tensor(4, 64)}, "void krelu()")
	// A kernel launched outside any operator keeps its stream's order.
	b.launch("cudaLaunchKernel", 160, "void loose()", 7, 4000, 5)
	etData, err := json.Marshal(map[string]any{"schema": "1.1.1-chakra.0.0.4", "nodes": nodes})
	require.NoError(t, err)
	f, rep, err := Import(b.json(t), etData, Options{Iteration: -1, ClockHz: 1})
	require.NoError(t, err)
	assert.Equal(t, 6, rep.FromET)
	assert.Equal(t, 1, rep.StreamOrdered)
	ops := opsByName(f)
	names := func(as []file.Access) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Buffer)
		}
		return out
	}
	assert.Equal(t, []string{"s1.0"}, names(ops["k0.ka"].Reads))
	assert.Equal(t, []string{"s2.1"}, names(ops["k0.ka"].Writes))
	assert.Equal(t, []string{"s2.1"}, names(ops["k1.kb"].Reads))
	assert.Equal(t, []string{"s2.2"}, names(ops["k2.kc"].Writes), "a new version of storage 2")
	assert.Equal(t, []string{"k2.kc"}, ops["k3.kc_tail"].After, "the kernels of one operator keep their order")
	assert.Equal(t, []string{"s3.1", "s2.2"}, names(ops["k4.kd"].Reads))
	assert.Equal(t, []string{"s4.1"}, names(ops["k5.krelu"].Reads), "in place: read")
	assert.Equal(t, []string{"s4.1"}, names(ops["k5.krelu"].Writes), "and written")
	assert.Equal(t, []string{"k5.krelu"}, ops["k6.loose"].After)

	// Built into a program, b and c are independent, d follows both.
	prog, err := file.Program(f, file.Options{})
	require.NoError(t, err)
	assert.Equal(t, 7, prog.NumOps())
}

func TestShortName(t *testing.T) {
	for sym, want := range map[string]string{
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)": "vectorized_elementwise_kernel",
		"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>(int)":                                                                                        "distribution_elementwise_grid_stride_kernel",
		"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas":                                                                      "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_wa", // cut at 60
		"": "kernel",
	} {
		assert.Equal(t, want, shortName(sym))
	}
}

func TestSchemaEffects(t *testing.T) {
	mut, ali, ok := schemaEffects("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
	require.True(t, ok)
	assert.Equal(t, []bool{true, false, false}, mut)
	assert.Equal(t, []bool{true}, ali)
	mut, ali, ok = schemaEffects("aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0]) -> Tensor")
	require.True(t, ok)
	assert.Equal(t, []bool{false, false, false, false, false}, mut, "commas inside brackets do not split")
	assert.Equal(t, []bool{false}, ali)
	_, ali, _ = schemaEffects("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
	assert.Equal(t, []bool{true}, ali)
	assert.Equal(t, []string{"self", "other", "alpha", "out"}, schemaArgNames("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"))
	_, _, ok = schemaEffects("")
	assert.False(t, ok)
}

func TestKernelsOfOneTopLevelOperatorKeepTheirOrder(t *testing.T) {
	b := &traceBuilder{}
	var nodes []any
	fresh := "aten::op(Tensor self) -> Tensor"
	b.cpu("user_annotation", "ProfilerStep#1", 0, 1000, nil)
	// conv2d encloses cudnn_convolution (two kernels) and add_ (bias, in
	// place); an unrelated relu at top level reads only the input.
	b.cpu("cpu_op", "aten::conv2d", 10, 100, map[string]any{"Record function id": 1})
	b.cpu("cpu_op", "aten::cudnn_convolution", 12, 40, map[string]any{"Record function id": 2})
	b.launch("cudaLaunchKernel", 20, "void im2col()", 7, 500, 5)
	// A tensor allocated inside conv2d after its first kernel: no rename.
	b.cpu("cpu_op", "aten::empty", 25, 2, map[string]any{"Record function id": 5})
	b.launch("cudaLaunchKernel", 30, "void gemm()", 7, 510, 5)
	b.cpu("cpu_op", "aten::add_", 60, 20, map[string]any{"Record function id": 3})
	b.launch("cudaLaunchKernel", 65, "void bias()", 7, 520, 5)
	b.cpu("cpu_op", "aten::relu", 200, 20, map[string]any{"Record function id": 4})
	b.launch("cudaLaunchKernel", 205, "void relu()", 7, 530, 5)
	nodes = append(nodes,
		etNodeJSON(101, 1, "aten::conv2d", fresh, [][]any{tensor(1, 64)}, [][]any{tensor(2, 64)}),
		etNodeJSON(102, 2, "aten::cudnn_convolution", fresh, [][]any{tensor(1, 64)}, [][]any{tensor(2, 64)}, 101),
		etNodeJSON(105, 5, "aten::empty", "aten::empty.memory_format(SymInt[] size) -> Tensor", nil, [][]any{tensor(2, 64)}, 101),
		etNodeJSON(103, 3, "aten::add_", "aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", [][]any{tensor(2, 64), tensor(3, 4)}, [][]any{tensor(2, 64)}, 101),
		etNodeJSON(104, 4, "aten::relu", fresh, [][]any{tensor(1, 64)}, [][]any{tensor(4, 64)}))
	etData, err := json.Marshal(map[string]any{"schema": "1.1.1-chakra.0.0.4", "nodes": nodes})
	require.NoError(t, err)
	f, rep, err := Import(b.json(t), etData, Options{Iteration: 1, ClockHz: 1})
	require.NoError(t, err)
	assert.Equal(t, 4, rep.FromET)
	ops := opsByName(f)
	assert.Equal(t, []string{"k0.im2col"}, ops["k1.gemm"].After)
	assert.Equal(t, []string{"k1.gemm"}, ops["k2.bias"].After, "add_ runs inside conv2d: after its other kernels")
	assert.Equal(t, "s2.1", ops["k2.bias"].Writes[0].Buffer, "the empty inside conv2d did not start a new version")
	assert.Empty(t, ops["k3.relu"].After, "relu is its own top-level operator and reads only the input")
}
