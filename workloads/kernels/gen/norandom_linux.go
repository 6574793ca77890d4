package main

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
)

// addrNoRandomize is Linux's ADDR_NO_RANDOMIZE personality flag
// (<linux/personality.h>), what `setarch -R` sets.
const addrNoRandomize = 0x0040000

// runFixedLayout runs cmd with address-space layout randomization turned off,
// as `setarch -R` would, and returns its combined output.
//
// Why: nvcc 11.8's cicc numbers PTX virtual registers in an order that
// depends on where its heap objects land, so with ASLR the same source gives
// one of several PTX texts (rl.cu: about one compile in six differed, e.g.
// %f72 against %f73), and the fat binary that embeds it differs too, which
// made `make kernels-check` fail at random. The SASS is the same either way.
// With a fixed layout every compile gives the same bytes.
//
// The personality is a property of the calling OS thread and is inherited by
// the process it forks, so the goroutine stays on its thread while it sets
// the flag, starts the child, and restores the old value.
func runFixedLayout(cmd *exec.Cmd) (_ []byte, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, _, errno := syscall.RawSyscall(syscall.SYS_PERSONALITY, 0xffffffff, 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("personality: %v", errno)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PERSONALITY, old|addrNoRandomize, 0, 0); errno != 0 {
		return nil, fmt.Errorf("personality(ADDR_NO_RANDOMIZE): %v", errno)
	}
	defer func() {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PERSONALITY, old, 0, 0); errno != 0 {
			err = errors.Join(err, fmt.Errorf("personality (restore): %v", errno))
		}
	}()
	return cmd.CombinedOutput()
}
