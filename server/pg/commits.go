package pg

import "sync"

// commits wakes whoever waits for the next commit on a pool's connections:
// the outbox consumers of the same process, which would otherwise find a
// new event only at their next poll (decision 0247). It costs a committing
// transaction one uncontended mutex when nobody waits, and nothing in the
// database (a NOTIFY would serialise the cluster's commits, decision 0020).
type commits struct {
	mu sync.Mutex
	ch chan struct{} // nil while nobody waits
}

// next returns a channel closed at the next commit.
func (c *commits) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// ring wakes every waiter: one close however many commits happen before
// they look again.
func (c *commits) ring() {
	c.mu.Lock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
	c.mu.Unlock()
}
