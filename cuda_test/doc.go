// Package gputest holds the tests and benchmarks that need a GPU. Without
// one (CI) each test skips, saying so, but for those of the Go layer's own
// behaviour (named TestLayer…), which TestGoLayerOnFakeDriver runs on the
// fake driver. tools/gpu-suite.sh builds the test binaries for every pinned
// toolkit and runs them on the GPU machine.
//
// Its directory is cuda_test, where the project keeps its GPU tests. The
// package cannot take that name: the go command reads a test file's
// "package cuda_test" as the external tests of a package named cuda.
package gputest
