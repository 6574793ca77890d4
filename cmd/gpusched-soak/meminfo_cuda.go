//go:build cuda

package main

import (
	"fmt"

	"github.com/mumax/3/cuda/cu"
)

// memInfo is cuMemGetInfo on the calling thread's current context (the
// soak calls it from the device's main host thread). mumax's call panics on
// a driver error; the panic becomes an error.
func memInfo() (free, total int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cuMemGetInfo: %v", p)
		}
	}()
	free, total = cu.MemGetInfo()
	return free, total, nil
}
