package device

// BlockAccess is an optional interface of a Launch's Sync (BlockSync): the
// device bytes one block reads and writes. Blocks of a synchronizing launch
// run at different times, ordered by their counters rather than by the
// launch as a whole, so a race checker that sees only the launch's Args
// reports its overlap with the launch it synchronizes with as a race. With
// BlockAccess it checks each block, over the time the block does its work
// (after its waits are met), against other commands; blocks of one launch
// are not checked against each other.
//
// BlockArgs appends to buf the buffer arguments (Kind ArgBuffer, with Mode
// and the byte range Off, Len) that block touches, in place of the
// launch's Args, and returns buf. A superset of the bytes really touched is
// allowed (it can only add reported races, never hide one). Words used only
// for synchronization (the counters of Waits, Posts and StartPosts, tile
// order tickets, flags), accessed with atomics and fences, are left out, as
// a race detector treats atomics as synchronization.
type BlockAccess interface {
	BlockArgs(block int, buf []Arg) []Arg
}

// StartPoster is an optional interface of a Launch's Sync: the counters a
// block increments when it starts its work (once its waits are met), before
// it does that work, in addition to the Posts it makes when it ends.
// cuSync's producer raises the wait kernel's start flag this way from its
// first block.
type StartPoster interface {
	StartPosts(block int, buf []Counter) []Counter
}

// PlainArger is an optional interface of a Launch's Sync: the launch's
// arguments as the kernel takes them without synchronization (its
// synchronization arguments cleared, as a stream-ordered launch of the same
// kernel passes them). The simulator times such a launch from the plain
// launch's profile point, which kernel profiles measure, and adds what
// posting and polling cost (docs/SIMULATOR.md, "Tile synchronization").
type PlainArger interface {
	PlainArgs(args []Arg) []Arg
}
