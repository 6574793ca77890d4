package tilesync

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// Tail-rows order (Options.TailRowsAt). Not in the paper.
//
// In the row order a consumer takes its tiles row by row, so the tiles of
// the rows that read the producer's last, partial wave (the tail) start
// after every other consumer tile, and everything they do comes after the
// tail ends. Under TileSync a consumer tile waits for each producer tile
// just before the reduction slices it needs, and the tail rows' first
// producer tiles finished in the full waves before the tail: started
// earlier, their tiles compute those slices while the tail runs and have
// only the rest left when it ends. The option moves the tail rows'
// consumer tiles to the start of consumer round r (1: ahead of every other
// tile), a round being the consumer slots left beside the tail's blocks.
// Too early and they spin, holding slots other tiles could use; under
// RowSync they can only spin. Measured slower than the row order on GPT-3's
// MLP (docs/history/tilesync.md), so the rule does not use it.

// tailRows reports which producer row tiles the producer's last, partial
// wave writes, given prodSlots resident producer blocks on the device, with
// the producer taking its tiles in row order (the custom tile order). The
// second result is how many tiles that wave holds: 0 when the producer
// fits one wave or fills its last one.
func tailRows(prod tiles.Stage, prodSlots int) (map[int]bool, int) {
	n := prod.NumTiles()
	if prodSlots <= 0 || n <= prodSlots || n%prodSlots == 0 {
		return nil, 0
	}
	first := n / prodSlots * prodSlots
	rows := map[int]bool{}
	for i := first; i < n; i++ {
		rows[i/prod.TilesN()] = true
	}
	return rows, n - first
}

// tailRowsOrder is the consumer's tile order with the tiles whose inputs
// include a tail row moved to position (round-1) x (consSlots - tail
// tiles), the others in row order around them. late is how many tiles
// moved; 0 (and a nil order) when the producer has no tail.
func tailRowsOrder(p *Pair, prodSlots, consSlots, round int) (order []int32, late, at int) {
	rows, tail := tailRows(p.Prod, prodSlots)
	if tail == 0 {
		return nil, 0, 0
	}
	var early, lateTiles []int32
	tn := p.Cons.TilesN()
	for t := 0; t < p.Cons.NumTiles(); t++ {
		lo, hi := p.WaitRows(t / tn)
		isLate := false
		for r := lo; r <= hi; r++ {
			isLate = isLate || rows[r]
		}
		if isLate {
			lateTiles = append(lateTiles, int32(t))
		} else {
			early = append(early, int32(t))
		}
	}
	at = min(len(early), (round-1)*max(1, consSlots-tail))
	order = make([]int32, 0, p.Cons.NumTiles())
	order = append(order, early[:at]...)
	order = append(order, lateTiles...)
	order = append(order, early[at:]...)
	return order, len(lateTiles), at
}

// orderTailRows applies Options.TailRowsAt to a built pair: the consumer's
// order table (uploaded, and given to the simulator's model) and a note for
// Choices.
func (s *Scheduler) orderTailRows(h device.Host, info *device.Info, pr *pairRun) (string, error) {
	perSM := func(l *device.Launch) int { n, _ := info.Occupancy(l); return n }
	order, late, at := tailRowsOrder(pr.pair, info.SMs*perSM(&pr.prodL), info.SMs*perSM(&pr.consL), s.opt.TailRowsAt)
	if order == nil {
		return "tail rows: the producer has no partial last wave, row order kept", nil
	}
	table, err := s.upload(h, len(order), order)
	if err != nil {
		return "", err
	}
	pr.consL.Args[tiles.ArgOrder] = device.Arg{Kind: device.ArgBuffer, Buf: table, Mode: device.Read, Len: int64(4 * len(order))}
	pr.consSync.Order = order
	return fmt.Sprintf("tail rows: %d consumer tiles at position %d of %d", late, at, len(order)), nil
}
