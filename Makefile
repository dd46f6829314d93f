# Conveniences over the scripts the README names.
.PHONY: generate test check fuzz gpu-build gpu-bench-build
generate: ## regenerate every pinned version's bindings (those whose headers can be had here)
	bash tools/generate.sh
test: ## every test that needs no GPU, under every build tag
	bash tools/test.sh
check: ## fail if the committed bindings differ from the generator's output
	go run ./gen -check
fuzz: ## fuzz the generator's header parsing for FUZZTIME (default 30m)
	bash tools/fuzz.sh $(or $(FUZZTIME),30m)
gpu-build: ## build the GPU machine's test binaries into .gpu/ (then: bash tools/gpu-suite.sh there)
	bash tools/gpu-build.sh
gpu-bench-build: ## add the benchmarks' binaries to .gpu/ (after gpu-build; then: bench/gpu-perf.sh there)
	bash bench/gpu-bench-build.sh
