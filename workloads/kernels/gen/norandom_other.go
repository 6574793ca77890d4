//go:build !linux

package main

import "os/exec"

// runFixedLayout runs cmd and returns its combined output. Only Linux lets a
// process turn address-space randomization off for its children; nvcc's PTX
// may then vary between compiles (see norandom_linux.go).
func runFixedLayout(cmd *exec.Cmd) ([]byte, error) {
	return cmd.CombinedOutput()
}
