// Command manifest prints facts of headers/manifest.json for scripts:
//
//	go run ./tools/manifest tags     the build tags of every pinned version
//	go run ./tools/manifest newest   the build tag built when none is given
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cudagen/cudagen/headers"
)

func main() {
	root, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		root = filepath.Dir(root)
	}
	m, err := headers.Load(filepath.Join(root, "headers", "manifest.json"))
	if err != nil || len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: manifest tags|newest", err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "tags":
		for _, v := range m.Versions {
			fmt.Println(v.Tag)
		}
	case "newest":
		fmt.Println(m.Newest().Tag)
	default:
		fmt.Fprintln(os.Stderr, "usage: manifest tags|newest")
		os.Exit(2)
	}
}
