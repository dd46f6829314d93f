//go:build !cgo || !linux

package sleeper

// Sleeper is unavailable here: Wait sleeps in the driver on a Go thread.
type Sleeper struct{}

// New returns ErrUnavailable.
func New(sync, setCurrent uintptr) (*Sleeper, error) { return nil, ErrUnavailable }

// Sync returns -1.
func (s *Sleeper) Sync(ctx, ev uintptr) int32 { return -1 }

// Start returns false.
func (s *Sleeper) Start(ctx, ev uintptr) bool { return false }

// Await returns ErrUnavailable.
func (s *Sleeper) Await() (int32, error) { return -1, ErrUnavailable }

// Kick does nothing.
func (s *Sleeper) Kick() {}

// Unkick does nothing.
func (s *Sleeper) Unkick() {}

// Close does nothing.
func (s *Sleeper) Close() {}
