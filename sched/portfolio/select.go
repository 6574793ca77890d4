package portfolio

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// predicted is one candidate's estimate.
type predicted struct {
	idx int
	est Estimate
	err error
}

// selectFor predicts every candidate for in on the model of info, checks
// the finalists on h and returns the decision with the pick prepared on h.
func (p *Portfolio) selectFor(h device.Host, in *workloads.Instance, info device.Info) (*decision, sched.Scheduler, error) {
	t0 := h.Now()
	model, err := p.models(p.opt.Model, info)
	if err != nil {
		return nil, nil, fmt.Errorf("portfolio: model %s: %w", p.opt.Model, err)
	}
	cands := candidates(in.Prog, sched.DeviceTraits(h))
	preds := estimateAll(model, in.Prog, cands)
	ranked, stats := rank(preds)
	if len(ranked) == 0 {
		return nil, nil, fmt.Errorf("portfolio: none of %d candidates ran race-free on the model: %w", len(cands), firstErr(preds))
	}
	finals := p.finalists(ranked, cands)
	pick, chosen, s, measured, failed, err := p.check(h, in, cands, finals)
	if err != nil {
		return nil, nil, err
	}
	if failed > 0 {
		stats["finalists_failed"] = float64(failed)
	}
	rankOf := slices.IndexFunc(ranked, func(r predicted) bool { return r.idx == pick })
	stats["picked:"+cands[pick].name] = 1
	stats["picked_rank"] = float64(rankOf)
	stats["predicted_us"] = us(ranked[rankOf].est.Makespan)
	stats["predicted_best_us"] = us(ranked[0].est.Makespan)
	stats["finalists"] = float64(len(finals))
	if measured > 0 {
		stats["checked_us"] = us(measured)
	}
	if chosen.frozen {
		stats["frozen"] = 1
	}
	stats["prepare_us"] = us(h.Now() - t0)
	return &decision{pick: chosen, stats: stats}, s, nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// estimateAll predicts every candidate, in parallel; the result is in
// candidate order whatever order the estimates finish in.
func estimateAll(model CostModel, prog *workloads.Program, cands []candidate) []predicted {
	out := make([]predicted, len(cands))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(cands)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i].idx = i
				s, err := cands[i].build()
				if err != nil {
					out[i].err = err
					continue
				}
				out[i].est, out[i].err = model.Estimate(prog, s)
				if out[i].err != nil {
					out[i].err = fmt.Errorf("%s: %w", cands[i].name, out[i].err)
				}
			}
		}()
	}
	for i := range cands {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// rank keeps the candidates that ran race-free, fastest predicted first
// (ties in candidate order), and counts the others.
func rank(preds []predicted) ([]predicted, map[string]float64) {
	stats := map[string]float64{"candidates": float64(len(preds))}
	var ok []predicted
	for _, r := range preds {
		switch {
		case r.err != nil:
			stats["candidates_failed"]++
		case r.est.Races > 0:
			stats["candidates_racy"]++
		default:
			ok = append(ok, r)
		}
	}
	sort.SliceStable(ok, func(a, b int) bool { return ok[a].est.Makespan < ok[b].est.Makespan })
	return ok, stats
}

func firstErr(preds []predicted) error {
	for _, r := range preds {
		if r.err != nil {
			return r.err
		}
	}
	return errors.New("every candidate raced")
}

// finalists are the best predictions within Margin of the best, at most
// Finalists of them, and, when they are checked on the device, the best
// prediction of every other family of candidates (familyOf), serial among
// them: a model that misjudges a whole way of issuing work still has that
// way's best checked on the device.
func (p *Portfolio) finalists(ranked []predicted, cands []candidate) []int {
	limit := float64(ranked[0].est.Makespan) * (1 + p.opt.Margin)
	var out []int
	for _, r := range ranked {
		if len(out) == p.opt.Finalists || float64(r.est.Makespan) > limit {
			break
		}
		out = append(out, r.idx)
	}
	if p.opt.Check == 0 {
		return out[:1]
	}
	covered := map[string]bool{}
	for _, i := range out {
		covered[cands[i].family] = true
	}
	for _, r := range ranked {
		if f := cands[r.idx].family; !covered[f] {
			covered[f] = true
			out = append(out, r.idx)
		}
	}
	return out
}
