package lifetime

// Reuse. A flush keeps the driver handle of a retired event whose work is
// complete (never recorded, or the Owner's Complete says so) by its
// creation flags, up to ReuseMax per flag set, for the next create with the
// same flags (Reuse); the kept handles go to the Owner's Release with the
// context. Never kept: events marked NoReuse, events closed by their
// device, and any handle once the Domain is closing.
const (
	ReuseMax = 64 // driver handles kept per flag set
	flagSets = 8  // CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS
)

// keptHandles are a Domain's kept event handles, by flag set, under its Mu.
type keptHandles [flagSets][]uintptr

// reusable reports whether a retired handle's driver handle may be kept,
// but for the driver's answer on a recorded event.
func reusable(h *Handle, closing bool) bool {
	return h.Kind == KindEvent && !closing && h.State.Load()&(NoReuse|ClosedByDevice) == 0
}

// Reuse pops a kept driver handle with flags f (0 if none). Under d.Mu.
func (d *Domain) Reuse(f uint32) uintptr {
	l := d.kept[f%flagSets]
	if len(l) == 0 {
		return 0
	}
	d.kept[f%flagSets] = l[:len(l)-1]
	return l[len(l)-1]
}

// Keep keeps a complete event's driver handle for reuse; false if its flag
// set has ReuseMax already. Under d.Mu.
func (d *Domain) Keep(f uint32, h uintptr) bool {
	l := d.kept[f%flagSets]
	if len(l) >= ReuseMax {
		return false
	}
	if l == nil {
		l = make([]uintptr, 0, ReuseMax)
	}
	d.kept[f%flagSets] = append(l, h)
	return true
}

// Kept is the number of kept handles with flags f. Under d.Mu.
func (d *Domain) Kept(f uint32) int { return len(d.kept[f%flagSets]) }

// keepRetired keeps a reusable retired event's driver handle instead of
// destroying it, and drops it from Live (the Domain is not closing, so a
// Device holds Live above zero). Under d.Mu.
func (d *Domain) keepRetired(h *Handle) bool {
	if d.Closing || !d.Keep(h.Flags, h.H) {
		return false
	}
	d.Live--
	return true
}

// all takes every kept handle out. Under d.Mu.
func (k *keptHandles) all() []uintptr {
	var all []uintptr
	for i := range k {
		all = append(all, k[i]...)
		k[i] = nil
	}
	return all
}
