//go:build race

package main

// raceDetector is true under go test -race: the slowest tests then run
// fewer cases (never none), so that the race detector's run of every
// package stays within minutes; the ordinary run covers every case.
const raceDetector = true
