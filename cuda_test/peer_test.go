//go:build cgo

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda"
)

// TestLayerPeerAccess: between two GPUs, EnablePeerAccess turns access on
// as CanAccessPeer allows, once per direction (a second call makes no
// driver call; a peer context released and made again needs one), and
// buffers then copy both ways on either device's stream, the values
// checked; one GPU as its own peer, a nil peer and a closed one are
// refused before the driver is called.
func TestLayerPeerAccess(t *testing.T) {
	d0 := gpu(t)
	if n := must[int](t)(cuda.DeviceCount()); n < 2 {
		t.Skipf("skipping: peer access needs 2 GPUs, this machine has %d", n)
	}
	d1 := must[*cuda.Device](t)(cuda.GetDevice(1))
	defer d1.Close()
	can := must[bool](t)(d0.CanAccessPeer(d1))
	enables, fake := fakeCounter("fakecuda_peer_enables")
	for i := range 2 {
		if direct := must[bool](t)(d0.EnablePeerAccess(d1)); direct != can {
			t.Fatalf("EnablePeerAccess call %d: direct %v, CanAccessPeer %v", i+1, direct, can)
		}
	}
	if now, _ := fakeCounter("fakecuda_peer_enables"); fake && now != enables+1 {
		t.Errorf("two EnablePeerAccess calls called cuCtxEnablePeerAccess %d times, want once", now-enables)
	}
	back := must[bool](t)(d1.EnablePeerAccess(d0))
	t.Logf("device 0 → 1: can access %v; device 1 → 0: direct %v", can, back)

	const n = 1 << 20
	host := make([]int32, n)
	for i := range host {
		host[i] = int32(i*7 - 3)
	}
	b0 := must[*cuda.Buffer[int32]](t)(cuda.AllocFrom(d0, host))
	defer b0.Close()
	b1 := must[*cuda.Buffer[int32]](t)(cuda.Alloc[int32](d1, n))
	defer b1.Close()
	back0 := must[*cuda.Buffer[int32]](t)(cuda.Alloc[int32](d0, n))
	defer back0.Close()
	s0 := must[*cuda.Stream](t)(d0.NewStream())
	defer s0.Close()
	s1 := must[*cuda.Stream](t)(d1.NewStream())
	defer s1.Close()
	ok(t, b1.CopyFromBuffer(s1, b0)) // on the destination's stream
	ok(t, s1.Sync())
	ok(t, back0.CopyFromBuffer(s1, b1)) // on the source's stream
	ok(t, s1.Sync())
	got := make([]int32, n)
	for _, b := range []*cuda.Buffer[int32]{b1, back0} {
		ok(t, b.CopyTo(got))
		for _, i := range []int{0, 1, n / 2, n - 1} {
			if got[i] != host[i] {
				t.Fatalf("%v after the peer copies: element %d is %d, want %d", b, i, got[i], host[i])
			}
		}
	}

	// Device 1's context released (its last Device closed) and made again:
	// access from device 0 went with it, and is enabled again.
	ok(t, b1.Close())
	ok(t, s1.Close())
	ok(t, d1.Close())
	<-d1.Done()
	d1 = must[*cuda.Device](t)(cuda.GetDevice(1))
	defer d1.Close()
	before, _ := fakeCounter("fakecuda_peer_enables")
	if direct := must[bool](t)(d0.EnablePeerAccess(d1)); direct != can {
		t.Fatalf("EnablePeerAccess to device 1's new context: direct %v, CanAccessPeer %v", direct, can)
	}
	if now, _ := fakeCounter("fakecuda_peer_enables"); fake && can && now != before+1 {
		t.Errorf("EnablePeerAccess to a peer context made again called cuCtxEnablePeerAccess %d times, want once", now-before)
	}

	_, err := d0.EnablePeerAccess(d0)
	isErr(t, "EnablePeerAccess of a device with itself", err, cuda.ErrInvalid, "both device 0")
	_, err = d0.CanAccessPeer(nil)
	isErr(t, "CanAccessPeer of a nil peer", err, cuda.ErrInvalid, "peer device")
	closed := must[*cuda.Device](t)(cuda.GetDevice(1))
	ok(t, closed.Close())
	_, err = d0.EnablePeerAccess(closed)
	isErr(t, "EnablePeerAccess of a closed peer", err, cuda.ErrClosed, "peer device")
}
