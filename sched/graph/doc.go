// Package graph schedules a program as a whole dependency graph: it builds
// the DAG of the program's operations from their access sets, assigns the
// nodes to streams by one of several published policies, synchronizes the
// streams with events, and either issues the result directly or captures
// it into one multi-stream CUDA graph.
//
// The model. FromInstance draws an edge i -> j (i before j in program order)
// whenever the two operations' buffer arguments conflict (read after write,
// write after read, write after write over overlapping bytes; each
// allocation is one object, so disjoint ranges of it are independent). The
// DAG offers transitive reduction, BFS levels and width (a maximum
// antichain, computed by Dilworth's theorem as a minimum chain cover from a
// Hopcroft-Karp matching on the transitive closure).
//
// A Plan gives every node a stream, an issue order, the events it waits on
// and whether an event is recorded after it; Plan.Verify proves with a
// vector clock per stream that every edge is ordered. The policies:
//
//   - Serial: one stream, program order.
//   - Taskflow: Taskflow's capture round-robin (levelize by BFS, node i of
//     a level on stream i mod S, S = 4; events only where a successor is on
//     another stream), over the transitive reduction.
//   - Nimble (Kwon et al., "Nimble: Lightweight and parallel GPU task
//     scheduling for deep learning", NeurIPS 2020, section 4.3): minimum
//     equivalent graph, bipartite maximum matching, one stream per path, an
//     event after every node.
//   - KeSCo (Lin et al., "KeSCo: Compile-time kernel scheduling for
//     multi-task programs", ICCD 2023; HuntKTm, TACO 2025): the distributor
//     (round-robin for sources, the parent's stream for a single parent,
//     the stream of the parent with the fewest unscheduled successors for
//     several; S = 8 capped at the width) and sync pruning (one wait per
//     foreign stream, none when the stream already waited on that node or a
//     later one of its stream). Plan.WaitsRemoved counts what pruning saved.
//
// Options.Prune gives the taskflow and nimble assignments KeSCo's sync
// pruning (the events recorded only where waited on).
//
// Scheduler runs any policy plain (launches, records and waits) or captured
// (Options.Graph: fork by waiting on an event of the origin stream, join
// back at the end, instantiate once in Prepare for the whole program, or per
// step in Run with Options.PerStep). Stats() reports streams, waits,
// waits_removed, cross_edges, events and graph_nodes. A whole-program plan
// (and AutoGraph's, IOS's, MultiProcess's) needs every step known ahead
// (sched.TraitWholeProgram), which a Dynamic program does not offer.
//
// GrCUDA is the runtime counterpart, GrCUDA's stream policy (Parravicini et
// al., IPDPS 2021): the DAG is discovered kernel by kernel at run time with
// an unbounded window, independent kernels go to different streams. (The
// GrSched baseline of the experiments is sched/acs's window scheduler with
// an unbounded window; this is the other reading of "GrSched-like".)
// MultiProcess runs each step of a program (a task) on its own host thread
// with its own inner scheduler, KeSCo's multi-process case.
package graph
