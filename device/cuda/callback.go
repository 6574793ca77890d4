//go:build cuda

package cuda

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"sync"
)

// callbacks maps the handles passed to cuLaunchHostFunc to Go functions:
// C holds only an integer, never a Go pointer.
var callbacks = callbackTable{m: map[uintptr]*callbackEntry{}}

type callbackTable struct {
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]*callbackEntry
}

type callbackEntry struct {
	fn func()
	r  *run
	// persistent entries belong to graph host nodes, which run once per
	// graph launch; they are removed when the run ends. Others run once.
	persistent bool
	// stream is the stream the callback was launched on (a timeline's
	// "launched on stream"), -1 for a graph's host node.
	stream int
}

func (t *callbackTable) add(fn func(), r *run, persistent bool, stream int) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.m[t.next] = &callbackEntry{fn: fn, r: r, persistent: persistent, stream: stream}
	return t.next
}

func (t *callbackTable) remove(h uintptr) {
	t.mu.Lock()
	delete(t.m, h)
	t.mu.Unlock()
}

func (t *callbackTable) take(h uintptr) *callbackEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[h]
	if e != nil && !e.persistent {
		delete(t.m, h)
	}
	return e
}

// gpuschedHostFunc runs on the driver's callback thread.
//
//export gpuschedHostFunc
func gpuschedHostFunc(handle C.uintptr_t) {
	e := callbacks.take(uintptr(handle))
	if e == nil {
		return // its run has ended
	}
	defer e.r.th.callbackDone()
	defer func() {
		if p := recover(); p != nil {
			e.r.callbackError(fmt.Sprintf("host callback panicked: %v", p))
		}
	}()
	if !e.r.tracing {
		e.fn()
		return
	}
	// When tracing, the callback's run on the driver's thread is a span of
	// the timeline's callback lane (as the simulator draws it), so that the
	// delay from a stream reaching the callback to its run shows.
	at := e.r.now()
	defer func() { e.r.traceCallback(e.stream, at, e.r.now()) }()
	e.fn()
}
