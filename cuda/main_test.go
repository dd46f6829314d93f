package cuda_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/cudagen/cudagen/cuda"
)

// TestMain leaves the examples out where there is no GPU: they need one to
// produce their output. CI has none.
func TestMain(m *testing.M) {
	flag.Parse()
	if _, err := cuda.DeviceCount(); err != nil {
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			fmt.Printf("skipping the examples (they run on the GPU machine): %v\n", err)
			flag.Set("test.run", "^Test")
		}
	}
	os.Exit(m.Run())
}
