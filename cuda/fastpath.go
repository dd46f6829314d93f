package cuda

import "github.com/cudagen/cudagen/cuda/driver"

// The calls that name their objects by handle (record, query, synchronize)
// go to the driver without the current-context check first: that check is
// a second driver call (cuCtxGetCurrent), about 30 ns of the ~90 ns a
// crossing costs on an H100 host. The driver accepts these calls from a
// thread with no current context (TestCallsFromThreadWithoutContext logs
// it). Should it refuse one anyway, the call is made again the safe way,
// with the context made current in the same crossing, and that result is
// returned: so the fast path can cost a second attempt on errors, never a
// different answer. Calls that need the context (create, elapsed time)
// always make it current.

func eventRecord(p *primary, e driver.Event, s driver.Stream) error {
	if driver.EventRecord(e, s) == nil {
		return nil
	}
	return driver.EventRecordCtx(p.ctx, e, s)
}

func eventQuery(p *primary, e driver.Event) error {
	if err := driver.EventQuery(e); err == nil || err == driver.ErrorNotReady {
		return err
	}
	return driver.EventQueryCtx(p.ctx, e)
}

func eventSync(p *primary, e driver.Event) error {
	if driver.EventSynchronize(e) == nil {
		return nil
	}
	return driver.EventSynchronizeCtx(p.ctx, e)
}
