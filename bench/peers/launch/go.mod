module github.com/cudagen/cudagen/bench/peers/launch

go 1.25.0

require (
	github.com/cudagen/cudagen v0.0.0
	github.com/gocnn/gocu v0.7.5
	gorgonia.org/cu v0.9.6
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)

replace github.com/cudagen/cudagen => ../../..
