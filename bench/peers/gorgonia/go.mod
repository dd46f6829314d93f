module github.com/cudagen/cudagen/bench/peers/gorgonia

go 1.25

require gorgonia.org/cu v0.9.6

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)

require github.com/cudagen/cudagen v0.0.0

replace github.com/cudagen/cudagen => ../../..
