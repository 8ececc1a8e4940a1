package toolctx

import (
	"runtime"
	"sync"
)

// pool hands out configured verifier instances, at most GOMAXPROCS of
// them, created on demand. Ownership is an instance's mutex: get locks one
// from the free list; a caller that must come back to the same instance
// (the body after the headers, a claim's settling) locks that one again,
// since the core keeps the ticket there.
type pool struct {
	free   chan *instance
	mu     sync.Mutex
	made   int
	limit  int
	create func() (*instance, error)
}

func newPool(create func() (*instance, error)) *pool {
	n := runtime.GOMAXPROCS(0)
	return &pool{free: make(chan *instance, n), limit: n, create: create}
}

// get answers a locked, live instance.
func (p *pool) get() (*instance, error) {
	for {
		var in *instance
		select {
		case in = <-p.free:
		default:
			if p.reserve() {
				created, err := p.create()
				if err != nil {
					p.drop()
					return nil, err
				}
				created.mu.Lock()
				return created, nil
			}
			in = <-p.free
		}
		in.mu.Lock()
		if !in.dead {
			return in, nil
		}
		in.mu.Unlock()
	}
}

// put unlocks an instance from get and returns it to the free list; a dead
// one leaves the pool and frees its place.
func (p *pool) put(in *instance) {
	dead := in.dead
	in.mu.Unlock()
	if dead {
		p.drop()
		return
	}
	p.free <- in
}

func (p *pool) reserve() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.made >= p.limit {
		return false
	}
	p.made++
	return true
}

func (p *pool) drop() {
	p.mu.Lock()
	p.made--
	p.mu.Unlock()
}
