module github.com/cudagen/cudagen/bench/peers/gocu

go 1.25.0

require github.com/gocnn/gocu v0.7.5

require github.com/google/uuid v1.6.0 // indirect

require github.com/cudagen/cudagen v0.0.0

replace github.com/cudagen/cudagen => ../../..
