// Package experiments runs matrices of workload x scheduler x device x
// repetition, computes statistics, and writes results people and scripts
// read. Workload families and schedulers register themselves here (files
// register_<strategy>.go) so experiment files can name them.
package experiments
