//go:build !cgo

package driver

// keptCount is how many C copies are kept: none without cgo, where no
// call reaches a driver.
func keptCount() int { return 0 }
