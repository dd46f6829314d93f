package cuda_test

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

var (
	_ encoding.TextMarshaler     = cuda.IPCEventHandle{}
	_ encoding.TextAppender      = cuda.IPCEventHandle{}
	_ encoding.BinaryMarshaler   = cuda.IPCEventHandle{}
	_ encoding.BinaryAppender    = cuda.IPCEventHandle{}
	_ encoding.TextUnmarshaler   = (*cuda.IPCEventHandle)(nil)
	_ encoding.BinaryUnmarshaler = (*cuda.IPCEventHandle)(nil)
)

func randomDriverHandle(r *rand.Rand) driver.IPCEventHandle {
	var h driver.IPCEventHandle
	for i := range h {
		h[i] = byte(r.UintN(256))
	}
	return h
}

// handleOf makes a handle of the driver's bytes b (the rest zero).
func handleOf(blocking bool, b ...byte) cuda.IPCEventHandle {
	var dh driver.IPCEventHandle
	copy(dh[:], b)
	return cuda.NewIPCEventHandle(dh, cuda.EventOptions{IPC: true, BlockingSync: blocking})
}

// v1Text is the version 1 text form of the driver's handle h.
func v1Text(h driver.IPCEventHandle) string {
	return "cuipcev1:" + base64.RawURLEncoding.EncodeToString(h[:])
}

func TestIPCHandleRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ones driver.IPCEventHandle
	for i := range ones {
		ones[i] = 0xff
	}
	for _, dh := range []driver.IPCEventHandle{{}, randomDriverHandle(r), randomDriverHandle(r), ones} {
		for _, blocking := range []bool{false, true} {
			h := cuda.NewIPCEventHandle(dh, cuda.EventOptions{IPC: true, BlockingSync: blocking})
			if h.Driver() != dh || h.Options() != (cuda.EventOptions{IPC: true, BlockingSync: blocking}) {
				t.Fatalf("handle of %x, blocking %v: driver %x, options %+v", dh, blocking, h.Driver(), h.Options())
			}
			text, err := h.MarshalText()
			if err != nil {
				t.Fatal(err)
			}
			if len(text) != 96 || !strings.HasPrefix(string(text), "cuipcev2:") || h.String() != string(text) {
				t.Errorf("text form %q (%d characters)", text, len(text))
			}
			if strings.ContainsAny(string(text[9:]), "+/=:") {
				t.Errorf("not unpadded base64url: %q", text)
			}
			var back cuda.IPCEventHandle
			if err := back.UnmarshalText(text); err != nil || back != h {
				t.Errorf("text round trip: %v, %+v != %+v", err, back, h)
			}
			bin, err := h.MarshalBinary()
			opt := byte(0)
			if blocking {
				opt = 1
			}
			if err != nil || len(bin) != 73 || string(bin[:8]) != "cuipcev2" || bin[8] != opt || !bytes.Equal(bin[9:], dh[:]) {
				t.Errorf("binary form %x, %v", bin, err)
			}
			back = cuda.IPCEventHandle{}
			if err := back.UnmarshalBinary(bin); err != nil || back != h {
				t.Errorf("binary round trip: %v", err)
			}
			// Through JSON, as a field and as a map value.
			type msg struct {
				Event cuda.IPCEventHandle            `json:"event"`
				More  map[string]cuda.IPCEventHandle `json:"more"`
			}
			js, err := json.Marshal(msg{Event: h, More: map[string]cuda.IPCEventHandle{"a": h}})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(js, []byte(`"event":"`+string(text)+`"`)) {
				t.Errorf("JSON %s lacks the text form", js)
			}
			var m msg
			if err := json.Unmarshal(js, &m); err != nil || m.Event != h || m.More["a"] != h {
				t.Errorf("JSON round trip: %v", err)
			}
		}
	}
}

// Version 1 handles (the text "cuipcev1:" and 64 bytes, the binary form of
// the 64 bytes alone) still decode, hold no options, and encode back to
// the same text and bytes, so that a process passing one on passes it
// unchanged.
func TestIPCHandleVersion1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 4 {
		dh := randomDriverHandle(r)
		text := v1Text(dh)
		if len(text) != 95 {
			t.Fatalf("version 1 text is %d characters", len(text))
		}
		var h cuda.IPCEventHandle
		if err := h.UnmarshalText([]byte(text)); err != nil {
			t.Fatalf("version 1 text %q: %v", text, err)
		}
		if h.Driver() != dh || h.Options() != (cuda.EventOptions{IPC: true}) {
			t.Errorf("version 1 text decoded to %x, options %+v", h.Driver(), h.Options())
		}
		if h.String() != text {
			t.Errorf("version 1 handle re-encoded as %q, not %q", h, text)
		}
		if bin, _ := h.MarshalBinary(); !bytes.Equal(bin, dh[:]) {
			t.Errorf("version 1 handle's binary form %x, not the 64 bytes", bin)
		}
		var b cuda.IPCEventHandle
		if err := b.UnmarshalBinary(dh[:]); err != nil || b != h {
			t.Errorf("version 1 binary form (64 bytes) decoded to %+v, %v; want %+v", b, err, h)
		}
	}
}

// A handle of an encoding version this package does not know is refused,
// naming the version: never read as one it knows.
func TestIPCHandleFutureVersion(t *testing.T) {
	good, _ := handleOf(true, 1, 2, 3).MarshalText()
	bin, _ := handleOf(true, 1, 2, 3).MarshalBinary()
	for _, v := range []string{"3", "9", "10", "1234"} {
		var h cuda.IPCEventHandle
		err := h.UnmarshalText([]byte("cuipcev" + v + ":" + string(good[9:])))
		if !errors.Is(err, cuda.ErrMalformedHandle) || !strings.Contains(err.Error(), "encoding version "+v+",") {
			t.Errorf("text of version %s: %v", v, err)
		}
		b := append([]byte("cuipcev"+v), bin[8:]...)
		err = h.UnmarshalBinary(b)
		if !errors.Is(err, cuda.ErrMalformedHandle) || !strings.Contains(err.Error(), "encoding version "+v+",") {
			t.Errorf("binary form of version %s: %v", v, err)
		}
		if h != (cuda.IPCEventHandle{}) {
			t.Errorf("a refused handle changed the value")
		}
	}
}

func TestIPCHandleMalformed(t *testing.T) {
	good, _ := handleOf(false, 1, 2, 3).MarshalText()
	body := string(good[len("cuipcev2:"):])
	v1 := v1Text(driver.IPCEventHandle{1, 2, 3})
	v1body := v1[len("cuipcev1:"):]
	bad := map[string]string{
		"empty":                 "",
		"prefix only":           "cuipcev2:",
		"no prefix":             body,
		"no version":            "cuipcev:" + body,
		"leading zero":          "cuipcev02:" + body,
		"v2 body as v1":         "cuipcev1:" + body,
		"v1 body as v2":         "cuipcev2:" + v1body,
		"upper-case prefix":     "CUIPCEV2:" + body,
		"truncated":             string(good[:len(good)-1]),
		"extended":              string(good) + "A",
		"padded":                string(good) + "==",
		"std alphabet":          "cuipcev2:" + strings.Repeat("+", len(body)),
		"bad character":         "cuipcev2:" + strings.Repeat("*", len(body)),
		"newline inside":        "cuipcev2:\n" + body[1:],
		"space at end":          string(good[:len(good)-1]) + " ",
		"non-zero tail bits v1": "cuipcev1:" + v1body[:len(v1body)-1] + "B", // 64 bytes leave 2 spare bits in the last character
		"non-zero tail bits v2": "cuipcev2:" + body[:len(body)-1] + "B",     // 65 bytes leave 4
		"unknown option bit":    "cuipcev2:Ag" + body[2:],
		"hex":                   strings.Repeat("ab", 64),
		"JSON number":           "12",
	}
	for name, in := range bad {
		h := handleOf(true, 9, 9, 9)
		err := h.UnmarshalText([]byte(in))
		if !errors.Is(err, cuda.ErrMalformedHandle) {
			t.Errorf("%s: %q decoded (%v)", name, in, err)
			continue
		}
		if h != handleOf(true, 9, 9, 9) {
			t.Errorf("%s: a failed decode changed the handle", name)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "cuda: decode IPC event handle: ") || !strings.Contains(msg, "; ") {
			t.Errorf("%s: message %q", name, msg)
		}
	}
	bin, _ := handleOf(false, 1).MarshalBinary()
	badBin := map[string][]byte{
		"empty":             {},
		"one byte":          {1},
		"63 bytes":          make([]byte, 63),
		"65 bytes":          make([]byte, 65),
		"128 bytes":         make([]byte, 128),
		"v2 truncated":      bin[:len(bin)-1],
		"v2 extended":       append(append([]byte{}, bin...), 0),
		"v2 unknown option": append(append([]byte("cuipcev2"), 0x80), make([]byte, 64)...),
		"v2 wrong magic":    append([]byte("cuipcex2"), bin[8:]...),
		"no version":        append([]byte("cuipcev"), bin[8:]...),
	}
	for name, in := range badBin {
		h := handleOf(true, 9)
		if err := h.UnmarshalBinary(in); !errors.Is(err, cuda.ErrMalformedHandle) || h != handleOf(true, 9) {
			t.Errorf("%s (%d bytes): %v", name, len(in), err)
		}
	}
	var js struct{ Event cuda.IPCEventHandle }
	if err := json.Unmarshal([]byte(`{"Event":"cuipcev2:AAAA"}`), &js); !errors.Is(err, cuda.ErrMalformedHandle) {
		t.Errorf("short handle in JSON: %v", err)
	}
	var nilHandle *cuda.IPCEventHandle
	if err := nilHandle.UnmarshalText(good); err == nil {
		t.Error("decoding into a nil handle succeeded")
	}
}

// Any text either decodes to a handle whose text form is that text exactly
// (one text per handle), or is an error matching ErrMalformedHandle; so do
// bytes, and any 64 bytes (a version 1 binary form) round-trip both ways.
func FuzzIPCHandleText(f *testing.F) {
	good, _ := handleOf(true, 1, 2, 3, 250).MarshalText()
	bin, _ := handleOf(true, 1, 2, 3, 250).MarshalBinary()
	f.Add(good)
	f.Add(good[:50])
	f.Add(bin)
	f.Add([]byte(v1Text(driver.IPCEventHandle{1, 2, 3, 250})))
	f.Add([]byte("cuipcev2:"))
	f.Add([]byte("cuipcev3:"))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(append([]byte("cuipcev2:\r\n"), good[11:]...))
	f.Fuzz(func(t *testing.T, in []byte) {
		var h cuda.IPCEventHandle
		if err := h.UnmarshalText(in); err != nil {
			if !errors.Is(err, cuda.ErrMalformedHandle) {
				t.Fatalf("%q: %v", in, err)
			}
		} else if out, _ := h.MarshalText(); !bytes.Equal(out, in) {
			t.Fatalf("%q decoded to a handle whose text is %q", in, out)
		}
		var b cuda.IPCEventHandle
		if err := b.UnmarshalBinary(in); err != nil {
			if !errors.Is(err, cuda.ErrMalformedHandle) || len(in) == 64 {
				t.Fatalf("%x: %v", in, err)
			}
			return
		} else if out, _ := b.MarshalBinary(); !bytes.Equal(out, in) {
			t.Fatalf("%x decoded to a handle whose bytes are %x", in, out)
		}
		text, _ := b.MarshalText()
		var c cuda.IPCEventHandle
		if err := c.UnmarshalText(text); err != nil || c != b {
			t.Fatalf("%x: round trip through %q: %v", in, text, err)
		}
		if d := c.Driver(); len(in) == 64 && !bytes.Equal(d[:], in) {
			t.Fatalf("%x: driver handle %x", in, d)
		}
	})
}
