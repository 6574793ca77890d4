// Package fidelity measures how well a simulator predicts a GPU: given
// rows that ran on both (one scheduler on one workload, the GPU's measured
// repetitions beside the simulator's makespan), Summarize reports the
// errors a user of the simulator pays for:
//
//   - size: makespan MAPE, the median and largest absolute error, the
//     median signed error (bias) and how many rows the simulator
//     underestimates;
//   - speedups over the group's baseline row: median and largest error;
//   - order: of the scheduler pairs that the GPU separates clearly (more
//     than Options.Separation apart), how many the simulator orders the
//     same way, ties (within Options.Tie) or reverses;
//   - choice: per group, whether the GPU's fastest scheduler is among the
//     simulator's fastest (those it ties within Options.Tie), and the
//     regret of that pick on the GPU (the GPU makespan of the worst of them
//     over the GPU's best, minus one: the simulator gave no reason to
//     prefer one);
//   - the floor: the GPU's own spread, per row (the range of its
//     repetitions over their median) and, where another GPU run of the same
//     row exists, the two runs' MAPE. Errors below the floor mean nothing;
//   - modes: rows whose GPU repetitions fall in a fast and a slow mode
//     (Row.Modes: a jump of Options.ModeGap or more between sorted
//     neighbours, two or more repetitions on each side), as plain SET's
//     often do within one process (issue #18). Their median is whichever
//     mode won it, so the summary counts them, those with the median in
//     the slow mode, and puts the simulator's MAPE against the nearer
//     mode's median beside its MAPE against the median on the same rows.
//
// A group is the unit in which schedulers compete (one workload at one
// sweep point on one device); speedups, pairs and picks never cross groups.
// Every percentage is (sim - GPU) / GPU or its absolute value.
//
// The package knows nothing of experiments or devices: experiments.Validate
// builds Rows from two result sets and prints the Summary.
package fidelity
