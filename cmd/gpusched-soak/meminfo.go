//go:build !cuda

package main

import "github.com/gpusched/gpusched/device"

// memInfo: a binary built without CUDA has no device memory to ask about.
func memInfo() (free, total int64, err error) { return 0, 0, device.ErrNoDevice }
