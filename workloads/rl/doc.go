// Package rl is the rl-physics workload: a batched rigid-body step in the
// spirit of Brax's environments (Freeman et al., "Brax", NeurIPS 2021
// datasets track), the deep-RL workload of ACS (Durvasula et al., arXiv
// 2401.12377, section 2 and table 2): hundreds of tiny kernels per step
// whose set and sizes depend on the contacts of the current state, so the
// kernel graph changes every step.
//
// Model. An environment (ant, humanoid, halfcheetah, walker2d, grasp, at
// their published body dimensions) is a set of spheres, capsules and boxes
// built from particles held rigid by distance constraints ("rods"), on the
// ground plane z = 0. A step is position-based dynamics (Müller et al.,
// "Position based dynamics", 2007) with Jacobi constraint averaging
// (Macklin et al., "Unified particle physics", 2014), which is the shape of
// Brax's positional pipeline:
//
//	actuate      the policy's action as a velocity change
//	integrate    semi-implicit Euler prediction (gravity)
//	broadphase   grown boxes of every candidate capsule-capsule and
//	             sphere-capsule pair
//	clear        zero the per-type correction buffers
//	narrow phase one kernel per contact type present: sphere-plane,
//	             capsule-plane, box-plane, capsule-capsule, sphere-capsule
//	iterations   per contact type present, a solve kernel (Jacobi: each
//	             writes its own correction buffer); apply (sum the
//	             corrections in a fixed order); the rods, Gauss-Seidel in
//	             order within each environment, one thread per environment
//	velocity     v = (x - x_prev) / dt, damped
//	observe      per-environment observation and reward terms
//
// Environments are cut into groups (envs_per_group); every kernel works on
// one group, so a step is hundreds of launches of 1 to a few dozen blocks,
// and groups are independent of each other: the parallelism ACS finds. The
// rods kernel, a long serial loop per thread over few threads, is the
// latency-bound low-occupancy kind of kernel that leaves most of a GPU idle
// when kernels run one at a time.
//
// The host decides. As in Brax, the host picks each step's contact
// kernels: the generator runs the same step on the CPU (physics.go, which
// mirrors rl.cu operation for operation in float32), takes each group's
// broad-phase result and the particles near the ground, and emits only the
// narrow-phase and solve kernels of the contact types present, over lists
// of exactly those candidates. Program.Check compares the device's final
// positions and velocities, every step's observations and every step's
// broad-phase flags with the host's (see checkAbs, checkRel). A test
// compiles rl.cu as host C++ (testdata/harness.cc) and runs every kernel
// of a program thread by thread: the results equal the Go reference bit for
// bit, which is what a GPU computes too, the kernels using only correctly
// rounded, never-contracted operations.
//
// Every kernel touches explicit byte ranges (the group's slice of the
// particle arrays, the step's slice of the contact lists), which is what a
// dependency-tracking scheduler needs to see that groups do not conflict.
package rl
