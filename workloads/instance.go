package workloads

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Ref locates an operation: its step and its index in the step.
type Ref struct{ Step, Op int }

// Instance is a Program bound to a device: buffers allocated, inputs
// uploaded, every operation prebuilt as a device command. Operations are also
// numbered flat, in program order (0 .. N()-1), which is how most schedulers
// walk them.
type Instance struct {
	Prog *Program
	Bufs []device.Buffer
	Host []*device.HostMem

	refs     []Ref
	stepBase []int // flat index of each step's first op
	launches []device.Launch
	copies   []device.Copy
	args     [][]device.Arg // per op: the buffer arguments (access set)
	opt      BindOptions
}

// BindOptions change what Bind (and Reset) do.
type BindOptions struct {
	// NoDeviceData skips generating the device buffers' initial contents:
	// the uploads are still issued, with the same sizes on the same stream,
	// but carry whatever the staging memory holds. Only for a device that
	// moves no data (the simulator), whose timings do not depend on it;
	// generating a large workload's inputs is most of a simulated row's
	// CPU time. Host buffers are still filled: host code may read them.
	NoDeviceData bool
}

// Bind allocates p's buffers through h, uploads their initial contents
// (synchronously, before anything is timed) and prebuilds every command.
func Bind(h device.Host, p *Program) (*Instance, error) {
	return BindWith(h, p, BindOptions{})
}

// BindWith is Bind with options; the instance's Reset keeps them.
func BindWith(h device.Host, p *Program, opt BindOptions) (*Instance, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	in := &Instance{Prog: p, opt: opt}
	cleanup := func(err error) (*Instance, error) {
		return nil, errors.Join(err, in.Release(h))
	}
	for _, b := range p.Buffers {
		buf, err := h.Malloc(b.Bytes)
		if err != nil {
			return cleanup(fmt.Errorf("bind %s: allocate %s (%d bytes): %w", p.Name, b.Name, b.Bytes, err))
		}
		in.Bufs = append(in.Bufs, buf)
	}
	for _, hs := range p.Host {
		m, err := h.AllocHost(hs.Bytes, hs.Pinned)
		if err != nil {
			return cleanup(fmt.Errorf("bind %s: allocate host %s (%d bytes): %w", p.Name, hs.Name, hs.Bytes, err))
		}
		in.Host = append(in.Host, m)
	}
	if err := in.restore(h, nil); err != nil {
		return cleanup(err)
	}
	in.build()
	return in, nil
}

// Reset gives every buffer that an operation of the program writes its
// initial contents again, as Bind left them: host buffers refilled in
// place, device buffers uploaded through one staging stream, synchronously.
// Buffers that no operation writes (weights, constant inputs) still hold
// them. A runner calls it after a scheduler has run the program outside the
// timed region (a warm run, a search that times candidates), so that the
// timed run starts from the program's inputs and its outputs are one run's.
func (in *Instance) Reset(h device.Host) error {
	return in.restore(h, in.Prog.written())
}

// restore refills the host buffers and uploads the device buffers marked in
// w (nil: all of them).
func (in *Instance) restore(h device.Host, w *writtenSet) error {
	p := in.Prog
	for i, hs := range p.Host {
		if w != nil && !w.host[i] {
			continue
		}
		clear(in.Host[i].Data)
		if hs.Init != nil {
			hs.Init(in.Host[i].Data)
		}
	}
	stream, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return fmt.Errorf("bind %s: %w", p.Name, err)
	}
	var staging *device.HostMem
	err = in.upload(h, stream, &staging, w)
	if staging != nil {
		err = errors.Join(err, h.FreeHost(staging))
	}
	return errors.Join(err, h.Destroy(stream))
}

// writtenSet marks the device and host buffers that a program's operations
// write.
type writtenSet struct{ dev, host []bool }

func (p *Program) written() *writtenSet {
	w := &writtenSet{dev: make([]bool, len(p.Buffers)), host: make([]bool, len(p.Host))}
	for _, st := range p.Steps {
		for _, op := range st.Ops {
			switch op.Kind {
			case OpKernel:
				for _, a := range op.Args {
					if a.Buf >= 0 && a.Mode&device.Write != 0 {
						w.dev[a.Buf] = true
					}
				}
			case OpCopy:
				switch op.Copy.Kind {
				case device.HostToDevice, device.DeviceToDevice:
					w.dev[op.Copy.Dst] = true
				case device.DeviceToHost:
					w.host[op.Copy.Host] = true
				}
			}
		}
	}
	return w
}

// upload copies the initial contents of the device buffers marked in w
// (nil: all) through *staging (grown as needed) on stream, and waits for
// the copies.
func (in *Instance) upload(h device.Host, stream device.Stream, staging **device.HostMem, w *writtenSet) error {
	p := in.Prog
	for i, b := range p.Buffers {
		if w != nil && !w.dev[i] {
			continue
		}
		if *staging == nil || int64(len((*staging).Data)) < b.Bytes {
			if *staging != nil {
				if err := h.StreamSynchronize(stream); err != nil {
					return err
				}
				if err := h.FreeHost(*staging); err != nil {
					return err
				}
				*staging = nil
			}
			m, err := h.AllocHost(b.Bytes, true)
			if err != nil {
				return fmt.Errorf("bind %s: staging: %w", p.Name, err)
			}
			*staging = m
		} else if err := h.StreamSynchronize(stream); err != nil {
			return err
		}
		if !in.opt.NoDeviceData {
			p.initial(i, (*staging).Data[:b.Bytes])
		}
		c := device.Copy{Kind: device.HostToDevice, Dst: in.Bufs[i], Host: *staging, Bytes: b.Bytes, Label: "init " + b.Name}
		if err := h.Copy(stream, &c); err != nil {
			return fmt.Errorf("bind %s: upload %s: %w", p.Name, b.Name, err)
		}
	}
	return h.StreamSynchronize(stream)
}

func (in *Instance) build() {
	p := in.Prog
	n := p.NumOps()
	in.refs = make([]Ref, 0, n)
	in.launches = make([]device.Launch, n)
	in.copies = make([]device.Copy, n)
	in.args = make([][]device.Arg, n)
	for si, s := range p.Steps {
		in.stepBase = append(in.stepBase, len(in.refs))
		for oi := range s.Ops {
			k := len(in.refs)
			in.refs = append(in.refs, Ref{si, oi})
			op := &s.Ops[oi]
			switch op.Kind {
			case OpKernel:
				l := &in.launches[k]
				*l = device.Launch{Kernel: op.Kernel, Grid: op.Grid, Block: op.Block, SharedMem: op.SharedMem, Work: op.Work, Label: op.Name}
				l.Args = in.BindArgs(op.Args, nil)
				for _, a := range l.Args {
					if a.Kind == device.ArgBuffer {
						in.args[k] = append(in.args[k], a)
					}
				}
			case OpCopy:
				in.copies[k] = in.BindCopy(op.Copy, op.Name)
				r, w := in.copies[k].DeviceRanges()
				in.args[k] = append(r, w...)
			}
		}
	}
}

// BindArgs turns ArgSpecs into device arguments over this instance's
// buffers, appending to dst. remap, if not nil, substitutes buffers: a
// pipeline scheduler uses it to retarget a job to a worker's private buffers.
func (in *Instance) BindArgs(specs []ArgSpec, remap []device.Buffer) []device.Arg {
	out := make([]device.Arg, 0, len(specs))
	for _, a := range specs {
		if a.Buf < 0 {
			out = append(out, device.Arg{Kind: device.ArgScalar, Bits: a.Bits, Size: a.Size})
			continue
		}
		buf := in.Bufs[a.Buf]
		if remap != nil && !remap[a.Buf].IsNil() {
			buf = remap[a.Buf]
		}
		out = append(out, device.Arg{Kind: device.ArgBuffer, Buf: buf, Mode: a.Mode, Off: a.Off, Len: a.Len})
	}
	return out
}

// BindCopy turns a CopySpec into a device copy over this instance's buffers.
func (in *Instance) BindCopy(c CopySpec, label string) device.Copy {
	d := device.Copy{Kind: c.Kind, DstOff: c.DstOff, SrcOff: c.SrcOff, HostOff: c.HostOff, Bytes: c.Bytes, Label: label}
	switch c.Kind {
	case device.HostToDevice:
		d.Host, d.Dst = in.Host[c.Host], in.Bufs[c.Dst]
	case device.DeviceToHost:
		d.Host, d.Src = in.Host[c.Host], in.Bufs[c.Src]
	case device.DeviceToDevice:
		d.Src, d.Dst = in.Bufs[c.Src], in.Bufs[c.Dst]
	}
	return d
}

// N is the number of operations.
func (in *Instance) N() int { return len(in.refs) }

// Ref is the step and in-step index of flat operation k.
func (in *Instance) Ref(k int) Ref { return in.refs[k] }

// Op is flat operation k's description.
func (in *Instance) Op(k int) *Op {
	r := in.refs[k]
	return &in.Prog.Steps[r.Step].Ops[r.Op]
}

// Steps is the number of steps; StepRange is the flat index range [lo, hi)
// of step s.
func (in *Instance) Steps() int { return len(in.stepBase) }
func (in *Instance) StepRange(s int) (lo, hi int) {
	lo = in.stepBase[s]
	hi = len(in.refs)
	if s+1 < len(in.stepBase) {
		hi = in.stepBase[s+1]
	}
	return lo, hi
}

// Launch is flat operation k's prebuilt launch (nil for a copy).
func (in *Instance) Launch(k int) *device.Launch {
	if in.Op(k).Kind != OpKernel {
		return nil
	}
	return &in.launches[k]
}

// CopyCmd is flat operation k's prebuilt copy (nil for a kernel).
func (in *Instance) CopyCmd(k int) *device.Copy {
	if in.Op(k).Kind != OpCopy {
		return nil
	}
	return &in.copies[k]
}

// Access is flat operation k's access set: its buffer arguments with modes
// and ranges. Dependencies between operations are conflicts between these.
func (in *Instance) Access(k int) []device.Arg { return in.args[k] }

// Conflict reports whether operations i and j conflict (RAW, WAR or WAW).
func (in *Instance) Conflict(i, j int) bool { return device.Conflicts(in.args[i], in.args[j]) }

// Issue enqueues flat operation k on stream s.
func (in *Instance) Issue(h device.Host, s device.Stream, k int) error {
	if in.Op(k).Kind == OpKernel {
		return h.Launch(s, &in.launches[k])
	}
	return h.Copy(s, &in.copies[k])
}

// Outputs downloads every device buffer marked Output, and returns host
// buffers marked Output, by name. It synchronizes the device first.
func (in *Instance) Outputs(h device.Host) (_ map[string][]byte, err error) {
	if err := h.Synchronize(); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, h.Destroy(s)) }()
	for i, b := range in.Prog.Buffers {
		if !b.Output {
			continue
		}
		m, err := h.AllocHost(b.Bytes, true)
		if err != nil {
			return nil, err
		}
		c := device.Copy{Kind: device.DeviceToHost, Src: in.Bufs[i], Host: m, Bytes: b.Bytes, Label: "read " + b.Name}
		err = h.Copy(s, &c)
		if err == nil {
			err = h.StreamSynchronize(s)
		}
		out[b.Name] = append([]byte(nil), m.Data...)
		if err := errors.Join(err, h.FreeHost(m)); err != nil {
			return nil, err
		}
	}
	for i, hs := range in.Prog.Host {
		if hs.Output {
			out[hs.Name] = append([]byte(nil), in.Host[i].Data...)
		}
	}
	return out, nil
}

// Release frees everything Bind allocated, and reports every error.
func (in *Instance) Release(h device.Host) error {
	var errs []error
	for _, b := range in.Bufs {
		errs = append(errs, h.Free(b))
	}
	for _, m := range in.Host {
		errs = append(errs, h.FreeHost(m))
	}
	in.Bufs, in.Host = nil, nil
	return errors.Join(errs...)
}

// WithInstance binds p on h, calls f with the instance and releases it,
// keeping every error.
func WithInstance(h device.Host, p *Program, f func(in *Instance) error) error {
	in, err := Bind(h, p)
	if err != nil {
		return err
	}
	return errors.Join(f(in), in.Release(h))
}
