package cuda

import (
	"errors"
	"fmt"
	"weak"

	"github.com/cudagen/cudagen/cuda/driver"
)

// CanAccessPeer reports whether d can reach peer's memory directly
// (cuDeviceCanAccessPeer): over NVLink or PCIe, once EnablePeerAccess has
// turned it on. Two Devices of one GPU (ordinal) are refused with ErrInvalid:
// a device reaches its own memory without it.
func (d *Device) CanAccessPeer(peer *Device) (bool, error) {
	const op = "query peer access"
	if err := enterPeers(op, d, peer); err != nil {
		return false, err
	}
	defer d.h.Exit()
	defer peer.h.Exit()
	can, err := driver.DeviceCanAccessPeerCtx(d.p.ctx, d.p.dev, peer.p.dev)
	if err != nil {
		return false, driverErr(op, err)
	}
	return can != 0, nil
}

// EnablePeerAccess lets d's context reach peer's memory directly
// (cuCtxEnablePeerAccess, made in d's context): kernels on d may then read
// and write peer's buffers, and copies between their buffers
// (Buffer.CopyFromBuffer on a stream of d) go over the devices' link instead
// of through host memory. It returns whether access is direct: false, with
// no error, where the devices cannot reach each other (CanAccessPeer), and
// copies between them are staged through host memory by the driver. Access
// is one way, from d to peer: enable it on peer too for the other
// direction. It is idempotent: once on for the pair (of contexts), later
// calls return true without calling the driver, and a pair enabled by other
// code (CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) counts as on. It stays on
// while both contexts live; once either has been released (its last Device
// closed), a new Device of it needs EnablePeerAccess again, which then
// calls the driver.
func (d *Device) EnablePeerAccess(peer *Device) (direct bool, err error) {
	const op = "enable peer access"
	if err := enterPeers(op, d, peer); err != nil {
		return false, err
	}
	defer d.h.Exit()
	defer peer.h.Exit()
	// Keyed by the peer's context state, weakly: a peer context released
	// and made again (the same handle, access gone) is another key.
	key := weak.Make(peer.p)
	if _, on := d.p.peers.Load(key); on {
		return true, nil
	}
	can, err := driver.DeviceCanAccessPeerCtx(d.p.ctx, d.p.dev, peer.p.dev)
	if err != nil {
		return false, driverErr(op, err)
	}
	if can == 0 {
		return false, nil
	}
	err = driver.CtxEnablePeerAccessCtx(d.p.ctx, peer.p.ctx, 0)
	if err != nil && !errors.Is(err, driver.ErrorPeerAccessAlreadyEnabled) {
		return false, driverErr(op, err)
	}
	d.p.peers.Store(key, struct{}{})
	return true, nil
}

// enterPeers enters d and peer, two Devices of different GPUs, or returns
// the error with neither entered.
func enterPeers(op string, d, peer *Device) error {
	if err := d.enter(op); err != nil {
		return err
	}
	if peer == nil || peer.p == nil {
		d.h.Exit()
		return invalidErr(op, "peer device")
	}
	if err := (operand{r: &peer.h, name: "peer device"}).enter(op); err != nil {
		d.h.Exit()
		return err
	}
	if d.p.ordinal == peer.p.ordinal {
		d.h.Exit()
		peer.h.Exit()
		return &Error{Op: op, Detail: fmt.Sprintf("the device and its peer are both device %d", d.p.ordinal),
			Fix: "pass a Device of another GPU as the peer (a device reaches its own memory without peer access)", Err: ErrInvalid}
	}
	return nil
}
