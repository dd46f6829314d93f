# Conveniences over the scripts the README names.
.PHONY: generate test check gpu-build
generate: ## regenerate every pinned version's bindings
	bash tools/generate.sh
test: ## every test that needs no GPU, under every build tag
	bash tools/test.sh
check: ## fail if the committed bindings differ from the generator's output
	go run ./gen -check -skip-unavailable
gpu-build: ## build the GPU machine's binaries into .gpu/ (then: bash tools/gpu-suite.sh there)
	bash tools/gpu-build.sh
