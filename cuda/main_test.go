package cuda_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/cudagen/cudagen/cuda"
)

// TestMain leaves the GPU examples out where there is no GPU: they need one
// to produce their output (run alone, without a driver they print its
// error and return). CI has none. The tests, the fuzz seeds and the
// examples that need no GPU (ExampleIPCEventHandle_*) still run. Run with
// ipcChildArg, the binary is Example_ipc's other process.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == ipcChildArg {
		if err := ipcChild(os.Args[2]); err != nil {
			fmt.Println("child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	flag.Parse()
	if _, err := cuda.DeviceCount(); err != nil {
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			fmt.Printf("skipping the GPU examples (they run on the GPU machine): %v\n", err)
			flag.Set("test.run", "^(Test|Fuzz|ExampleIPCEventHandle_)")
		}
	}
	os.Exit(m.Run())
}
