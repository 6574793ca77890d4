// Package portfolio is gpusched's own scheduler: for each program it picks
// the fastest of many candidate schedules built from the strategies of
// sched and its subpackages, by predicting each on a cost model and
// checking the best few on the device.
//
// In Prepare, Portfolio lists the candidates that apply to the program and
// the device (sched.Missing over the program's traits, its tile pairs and
// the host's capabilities; candidates.go): the papers' strategies at
// several stream and worker counts, and their combinations (KeSCo's stream
// assignment captured as one multi-stream CUDA graph, Nimble's and
// Taskflow's assignments with KeSCo's sync pruning, plans per step for
// programs chosen at run time). A CostModel predicts each candidate's
// timed run as the runner measures it; candidates that fail or race are
// dropped. The best predicted (those within Margin of the best, at most
// Finalists) and the best prediction of each other family of candidates
// (one stream, streams, graphs, searches, runtimes, processes, pipelines,
// tile sync, a hardware queue: a model tends to misjudge a way of issuing work as a whole;
// serial is the floor) are then timed on the device as the runner times a
// row: in each of Check rounds each finalist in turn is prepared, run once
// untimed, timed once and released; the fastest median is prepared again
// and Run launches it. With Check 0 the model's pick is kept unchecked. A
// search that measures the device in Prepare (AutoGraph, IOS) finds
// another schedule each time on a GPU; the portfolio keeps the schedule
// its fastest check round found (Stats: frozen 1) and runs that, without
// searching again.
//
// The cost model is injected (Models), so that sched/* does not import
// the simulator: the experiments registry wires device/sim with the config
// of the device Prepare runs on ("auto") or a named one, which is how the
// selection's sensitivity to the simulator's accuracy is measured.
//
// A selection depends only on the program, the device and the options, so
// a Memo shared by the schedulers of one factory keeps it: the later
// repetitions of a row prepare only the pick (Stats: cached 1). Stats
// report the pick ("picked:NAME" 1 and its rank by prediction), its
// predicted and checked times, the best prediction, how many candidates
// were simulated, dropped for races or failed, and prepare_us, the
// selection's cost on the host's clock (wall time on a GPU; on the
// simulator only the device checks' simulated time, so results stay
// deterministic).
package portfolio
