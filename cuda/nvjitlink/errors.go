package nvjitlink

import "strconv"

// enumName is one row of an enum's table: value, C name, the header's
// description.
type enumName struct {
	v          int64
	name, desc string
}

// enumString is the C name of v in t, or "Type(v)".
//
//lint:ignore U1000 the generated enums' String methods call it (a build that binds no nvJitLink has none)
func enumString(v int64, t []enumName, typ string) string {
	for _, n := range t {
		if n.v == v {
			return n.name
		}
	}
	return typ + "(" + strconv.FormatInt(v, 10) + ")"
}

// String is the result's C name ("NVJITLINK_ERROR_PTX_COMPILE"), or its number.
func (r Result) String() string {
	for _, n := range namesResult {
		if n.v == int64(r) {
			return n.name
		}
	}
	return "nvJitLinkResult(" + strconv.Itoa(int(r)) + ")"
}

// description is the header's description of the result, if it has one.
func (r Result) description() string {
	for _, n := range namesResult {
		if n.v == int64(r) {
			return n.desc
		}
	}
	return ""
}

// Error makes a Result an error by itself: "cuda: nvJitLinkX: NAME (N): cause; fix".
func (r Result) Error() string { return (&Error{Result: r}).Error() }

// Error is a failed nvJitLink call: the function and its result. errors.Is
// matches it against its Result (errors.Is(err, ErrorPTXCompile)).
type Error struct {
	Func   string // the C function: "nvJitLinkComplete"; "" where unknown
	Result Result
}

func (e *Error) Error() string {
	op := "nvJitLink"
	if e.Func != "" {
		op = e.Func
	}
	msg := "cuda: " + op + ": " + e.Result.String() + " (" + strconv.Itoa(int(e.Result)) + ")"
	if h, ok := hints[e.Result.String()]; ok {
		msg += ": " + h
	} else if d := e.Result.description(); d != "" {
		msg += ": " + d
	}
	return msg
}

// Is matches the Result.
func (e *Error) Is(target error) bool {
	r, ok := target.(Result)
	return ok && r == e.Result
}

// hints say what each result means and what to do, by C name (the values
// are the same in every pinned header).
var hints = map[string]string{
	"NVJITLINK_ERROR_UNRECOGNIZED_OPTION":  "nvJitLink does not know an option; check the options against nvJitLink's documentation for this version",
	"NVJITLINK_ERROR_MISSING_ARCH":         "no target architecture was given; pass -arch=sm_NN among the options",
	"NVJITLINK_ERROR_INVALID_INPUT":        "an input or argument is invalid (empty data, a wrong input type, a handle not created); check the inputs",
	"NVJITLINK_ERROR_PTX_COMPILE":          "compiling PTX input failed; GetErrorLog says why",
	"NVJITLINK_ERROR_NVVM_COMPILE":         "compiling LTO-IR input failed; GetErrorLog says why (LTO-IR must come from a compatible NVRTC or nvcc -dlto)",
	"NVJITLINK_ERROR_INTERNAL":             "nvJitLink failed internally; GetErrorLog may say why",
	"NVJITLINK_ERROR_THREADPOOL":           "nvJitLink's thread pool failed; retry with fewer threads (-split-compile)",
	"NVJITLINK_ERROR_UNRECOGNIZED_INPUT":   "nvJitLink does not recognize the input's format; check the input type given with it",
	"NVJITLINK_ERROR_NULL_INPUT":           "an input is empty; pass data",
	"NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS": "two options conflict; check the options",
	"NVJITLINK_ERROR_INCORRECT_INPUT_TYPE": "the input type given does not match the data; pass its real type or InputAny",
	"NVJITLINK_ERROR_ARCH_MISMATCH":        "an input was built for another architecture than -arch; rebuild it for that architecture",
	"NVJITLINK_ERROR_OUTDATED_LIBRARY":     "an input is newer than the loaded nvJitLink; install a newer nvJitLink",
	"NVJITLINK_ERROR_MISSING_FATBIN":       "a fatbin input is missing; check the inputs",
}
