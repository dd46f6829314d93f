package nvrtc

// hints say what each result means and what to do, by C name (the values
// are the same in every pinned header).
var hints = map[string]string{
	"NVRTC_ERROR_OUT_OF_MEMORY":                         "NVRTC ran out of host memory; free memory or compile a smaller program",
	"NVRTC_ERROR_PROGRAM_CREATION_FAILURE":              "NVRTC could not create the program; check the source and headers passed",
	"NVRTC_ERROR_INVALID_INPUT":                         "an argument is invalid (an empty or missing value); check the arguments",
	"NVRTC_ERROR_INVALID_PROGRAM":                       "the program is not a live one (destroyed, or never created); create it with CreateProgram",
	"NVRTC_ERROR_INVALID_OPTION":                        "NVRTC does not know a compile option; check the options against NVRTC's documentation for this version",
	"NVRTC_ERROR_COMPILATION":                           "the source did not compile; GetProgramLog says why",
	"NVRTC_ERROR_BUILTIN_OPERATION_FAILURE":             "a built-in operation of NVRTC failed; check the options and the installation",
	"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION": "name expressions must be added before the program is compiled; call AddNameExpression first",
	"NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION":   "lowered names exist only after compilation; compile the program first",
	"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID":             "the name expression was not added, or names nothing the program defines; pass the string given to AddNameExpression",
	"NVRTC_ERROR_INTERNAL_ERROR":                        "NVRTC failed internally; retry, or report it with the source and options",
	"NVRTC_ERROR_TIME_FILE_WRITE_FAILED":                "NVRTC could not write the file of the -time option; check the path and its permissions",
	"NVRTC_ERROR_NO_INPUT":                              "there is no input to compile; pass a source",
	"NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED":               "no precompiled header was attempted; compile with -pch first",
	"NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED":             "the precompiled header heap is exhausted; raise it with SetPCHHeapSize",
	"NVRTC_ERROR_PCH_CREATE":                            "creating the precompiled header failed; GetPCHCreateStatus says why",
	"NVRTC_ERROR_CANCELLED":                             "the compilation was cancelled by the flow callback",
}
