package cuda_test

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
)

var (
	_ encoding.TextMarshaler     = cuda.IPCEventHandle{}
	_ encoding.TextAppender      = cuda.IPCEventHandle{}
	_ encoding.BinaryMarshaler   = cuda.IPCEventHandle{}
	_ encoding.BinaryAppender    = cuda.IPCEventHandle{}
	_ encoding.TextUnmarshaler   = (*cuda.IPCEventHandle)(nil)
	_ encoding.BinaryUnmarshaler = (*cuda.IPCEventHandle)(nil)
)

func randomHandle(r *rand.Rand) cuda.IPCEventHandle {
	var h cuda.IPCEventHandle
	for i := range h {
		h[i] = byte(r.UintN(256))
	}
	return h
}

func TestIPCHandleRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	handles := []cuda.IPCEventHandle{{}, randomHandle(r), randomHandle(r)}
	for i := range handles[len(handles)-1] {
		handles[len(handles)-1][i] = 0xff
	}
	for _, h := range handles {
		text, err := h.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		if len(text) != 95 || !strings.HasPrefix(string(text), "cuipcev1:") || h.String() != string(text) {
			t.Errorf("text form %q (%d characters)", text, len(text))
		}
		if strings.ContainsAny(string(text[9:]), "+/=:") {
			t.Errorf("not unpadded base64url: %q", text)
		}
		var back cuda.IPCEventHandle
		if err := back.UnmarshalText(text); err != nil || back != h {
			t.Errorf("text round trip: %v, %x != %x", err, back, h)
		}
		bin, err := h.MarshalBinary()
		if err != nil || !bytes.Equal(bin, h[:]) {
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

func TestIPCHandleMalformed(t *testing.T) {
	good, _ := cuda.IPCEventHandle{1, 2, 3}.MarshalText()
	body := string(good[len("cuipcev1:"):])
	bad := map[string]string{
		"empty":              "",
		"prefix only":        "cuipcev1:",
		"no prefix":          body,
		"other prefix":       "cuipcev2:" + body,
		"upper-case prefix":  "CUIPCEV1:" + body,
		"truncated":          string(good[:len(good)-1]),
		"extended":           string(good) + "A",
		"padded":             string(good) + "==",
		"std alphabet":       "cuipcev1:" + strings.Repeat("+", len(body)),
		"bad character":      "cuipcev1:" + strings.Repeat("*", len(body)),
		"newline inside":     "cuipcev1:\n" + body[1:],
		"space at end":       string(good[:len(good)-1]) + " ",
		"non-zero tail bits": "cuipcev1:" + body[:len(body)-1] + "B", // 64 bytes leave 2 spare bits in the last character
		"hex":                strings.Repeat("ab", 64),
		"JSON number":        "12",
	}
	for name, in := range bad {
		h := cuda.IPCEventHandle{9, 9, 9}
		err := h.UnmarshalText([]byte(in))
		if !errors.Is(err, cuda.ErrMalformedHandle) {
			t.Errorf("%s: %q decoded (%v)", name, in, err)
			continue
		}
		if h != (cuda.IPCEventHandle{9, 9, 9}) {
			t.Errorf("%s: a failed decode changed the handle", name)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "cuda: decode IPC event handle: ") || !strings.Contains(msg, "; pass the") {
			t.Errorf("%s: message %q", name, msg)
		}
	}
	for _, n := range []int{0, 1, 63, 65, 128} {
		h := cuda.IPCEventHandle{9}
		if err := h.UnmarshalBinary(make([]byte, n)); !errors.Is(err, cuda.ErrMalformedHandle) || h != (cuda.IPCEventHandle{9}) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	var js struct{ Event cuda.IPCEventHandle }
	if err := json.Unmarshal([]byte(`{"Event":"cuipcev1:AAAA"}`), &js); !errors.Is(err, cuda.ErrMalformedHandle) {
		t.Errorf("short handle in JSON: %v", err)
	}
	var nilHandle *cuda.IPCEventHandle
	if err := nilHandle.UnmarshalText(good); err == nil {
		t.Error("decoding into a nil handle succeeded")
	}
}

// Any text either decodes to a handle whose text form is that text exactly
// (one text per handle), or is an error matching ErrMalformedHandle; any 64
// bytes round-trip both ways.
func FuzzIPCHandleText(f *testing.F) {
	good, _ := cuda.IPCEventHandle{1, 2, 3, 250}.MarshalText()
	f.Add(good)
	f.Add(good[:50])
	f.Add([]byte("cuipcev1:"))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(append([]byte("cuipcev1:\r\n"), good[11:]...))
	f.Fuzz(func(t *testing.T, in []byte) {
		var h cuda.IPCEventHandle
		if err := h.UnmarshalText(in); err != nil {
			if !errors.Is(err, cuda.ErrMalformedHandle) {
				t.Fatalf("%q: %v", in, err)
			}
		} else if out, _ := h.MarshalText(); !bytes.Equal(out, in) {
			t.Fatalf("%q decoded to a handle whose text is %q", in, out)
		}
		if len(in) == 64 {
			var b cuda.IPCEventHandle
			if err := b.UnmarshalBinary(in); err != nil {
				t.Fatal(err)
			}
			text, _ := b.MarshalText()
			var c cuda.IPCEventHandle
			if err := c.UnmarshalText(text); err != nil || c != b || !bytes.Equal(c[:], in) {
				t.Fatalf("%x: round trip through %q: %v", in, text, err)
			}
		} else if err := h.UnmarshalBinary(in); !errors.Is(err, cuda.ErrMalformedHandle) {
			t.Fatalf("%d bytes decoded: %v", len(in), err)
		}
	})
}
