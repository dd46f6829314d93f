package nvjitlink

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
