package nccl

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestUniqueIDText(t *testing.T) {
	var id UniqueID
	for i := range id.Internal {
		id.Internal[i] = byte(i*31 + 7)
	}
	text, err := id.MarshalText()
	if err != nil || len(text) != 179 || !strings.HasPrefix(string(text), "ncclid1:") || id.String() != string(text) {
		t.Fatalf("MarshalText: %q (%d), %v", text, len(text), err)
	}
	var back UniqueID
	if err := back.UnmarshalText(append(text, '\n')); err != nil || back != id {
		t.Fatalf("UnmarshalText of MarshalText's text and a newline: %v, equal %v", err, back == id)
	}
	bin, _ := id.MarshalBinary()
	var fromBin UniqueID
	if err := fromBin.UnmarshalBinary(bin); err != nil || fromBin != id {
		t.Fatalf("binary round trip: %v", err)
	}
	for _, bad := range []string{"", "ncclid1:", "ncclid2:" + string(text[8:]), string(text[:100]), string(text) + "A", strings.Replace(string(text), "A", "+", 1)} {
		keep := back
		if err := back.UnmarshalText([]byte(bad)); !errors.Is(err, ErrInvalidSize) || !strings.HasPrefix(err.Error(), "cuda: nccl: reading a unique ID: ") || back != keep {
			t.Errorf("UnmarshalText(%.30q): %v; want a refusal that leaves the ID as it was", bad, err)
		}
	}
	if err := back.UnmarshalBinary(bin[:127]); !errors.Is(err, ErrInvalidSize) || back != id {
		t.Errorf("UnmarshalBinary of 127 bytes: %v", err)
	}
}

// The #define constants of nccl.h are bound as the header says: the
// unique ID's size is UniqueID's, the version code is NCCL_VERSION's of
// the three parts (2.9 and later), the parts make HeaderVersion, and the
// config's undefined int is C's INT_MIN.
func TestDefines(t *testing.T) {
	if UniqueIDBytes != len(UniqueID{}.Internal) {
		t.Errorf("UniqueIDBytes %d, and a UniqueID holds %d bytes", UniqueIDBytes, len(UniqueID{}.Internal))
	}
	if VersionCode != Major*10000+Minor*100+Patch {
		t.Errorf("VersionCode %d is not NCCL_VERSION(%d, %d, %d)", VersionCode, Major, Minor, Patch)
	}
	if v := fmt.Sprintf("%d.%d", Major, Minor); v != HeaderVersion {
		t.Errorf("NCCL_MAJOR.NCCL_MINOR is %s, and HeaderVersion %s", v, HeaderVersion)
	}
	if ConfigUndefInt != math.MinInt32 || SplitNoColor != -1 {
		t.Errorf("ConfigUndefInt %d, SplitNoColor %d; want INT_MIN and -1", ConfigUndefInt, SplitNoColor)
	}
}
