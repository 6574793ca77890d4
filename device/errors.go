package device

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsupported is returned (wrapped) when a strategy asks a device for a
// capability it does not have, such as the hardware dependency queue on a
// real GPU.
var ErrUnsupported = errors.New("unsupported on this device")

// ErrNoDevice is returned (wrapped) when no GPU or driver is available.
var ErrNoDevice = errors.New("no CUDA device")

// DeadlockError ends a run in which work remains and nothing can progress.
// Each entry of Waiting names one thing that waits and what it waits on.
// Livelock marks the variant in which host threads do not block but poll
// (StreamQuery, Query, a queue's Len) on work nothing can complete; their
// entries come first.
type DeadlockError struct {
	At       string   // simulated or wall time of detection
	Waiting  []string // "stream 3 waits on event 7 (never recorded)", "host thread main blocked in StreamSynchronize(stream 3)" ...
	Livelock bool
}

func (e *DeadlockError) Error() string {
	what := "deadlock"
	if e.Livelock {
		what = "livelock"
	}
	return fmt.Sprintf("%s at %s: %s", what, e.At, strings.Join(e.Waiting, "; "))
}

// APIError is a failed driver call: which call, and CUDA's name for the error.
type APIError struct {
	Call string // e.g. "cuStreamWaitEvent"
	Code string // e.g. "CUDA_ERROR_INVALID_HANDLE"
	Msg  string // optional detail
}

func (e *APIError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("%s: %s: %s", e.Call, e.Code, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Call, e.Code)
}
