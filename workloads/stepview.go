package workloads

import "fmt"

// StepView is step s of in as an Instance of its own: it shares in's
// buffers and prebuilt commands (nothing is copied or allocated on the
// device), and numbers the step's operations flat from 0. Schedulers that
// run steps independently use it: KeSCo's multi-process mode gives each
// task (one step) to its own host thread. The view must not be Released;
// release in.
func (in *Instance) StepView(s int) (*Instance, error) {
	if s < 0 || s >= in.Steps() {
		return nil, fmt.Errorf("program %q: step %d out of range [0,%d)", in.Prog.Name, s, in.Steps())
	}
	lo, hi := in.StepRange(s)
	prog := &Program{
		Name:    fmt.Sprintf("%s/step%d", in.Prog.Name, s),
		Buffers: in.Prog.Buffers,
		Host:    in.Prog.Host,
		Steps:   []Step{in.Prog.Steps[s]},
	}
	v := &Instance{Prog: prog, Bufs: in.Bufs, Host: in.Host, stepBase: []int{0}}
	v.refs = make([]Ref, hi-lo)
	for k := range v.refs {
		v.refs[k] = Ref{Step: 0, Op: k}
	}
	v.launches = in.launches[lo:hi:hi]
	v.copies = in.copies[lo:hi:hi]
	v.args = in.args[lo:hi:hi]
	return v, nil
}
