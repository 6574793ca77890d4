package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The simulator's only cost of another launch's branches is
// front_end.graph_branch_queue_ns: each branch head of G waits that much
// more per branch the other running launches hold, whether those branches
// run or wait inside their graph. So G alone or beside a graph of one
// branch takes its own time, and beside a reached graph of a branches
// waiting on either head it takes graph_branch_queue_ns * (a - 1) more per
// branch head past G's own, the same for both heads; without the field,
// nothing more. With front_end.graph_branch_queue_busy only the branches
// the other launches are busy on count, and A's, waiting on its head, are
// not: G takes its own time beside any A, as on the GPU (session 30).
func TestReachedBranchesReadTheBranchQueue(t *testing.T) {
	for _, q := range []float64{0, 120} {
		cfg := loadConfig(t, "h200")
		cfg.FrontEnd.GraphBranchQueueNs = q
		_, value := measured(t, cfg, "reached graphs' waiting branches")
		for _, b := range rbGBranches {
			alone := value(rbName(b, 0, ""))
			for _, a := range rbABranches {
				spin := value(rbName(b, a, rbHeads[0]))
				assert.InDelta(t, spin, value(rbName(b, a, rbHeads[1])), 1, "G of %d beside A of %d: either head (queue %v ns)", b, a, q)
				if b == 1 || a == 1 || q == 0 {
					assert.InDelta(t, alone, spin, 1, "G of %d beside A of %d: its own time (queue %v ns)", b, a, q)
					continue
				}
				assert.Greater(t, spin, alone+float64(b-1)*q*float64(a-1)*0.9, "G of %d beside A of %d: the queue charge per head (queue %v ns)", b, a, q)
			}
		}
	}
}

func TestReachedBranchesBusyLanesHoldNothingUp(t *testing.T) {
	cfg := loadConfig(t, "h200")
	cfg.FrontEnd.GraphBranchQueueNs, cfg.FrontEnd.GraphBranchQueueBusy = 120, true
	_, value := measured(t, cfg, "reached graphs' waiting branches")
	for _, b := range rbGBranches {
		alone := value(rbName(b, 0, ""))
		for _, head := range rbHeads {
			for _, a := range rbABranches {
				assert.InDelta(t, alone, value(rbName(b, a, head)), 1, "G of %d beside A of %d waiting on %s", b, a, head)
			}
		}
	}
}
