// Command gen generates cudagen's low-level driver bindings from the pinned
// CUDA headers.
//
// Run from anywhere inside the module:
//
//	go run ./gen               regenerate every version in headers/manifest.json
//	                           whose headers can be had here (fetching them into
//	                           the cache as needed); the others keep their
//	                           committed files, and it says which and why
//	go run ./gen -cuda DIR     pin the toolkit in DIR (DIR/include/cuda.h and
//	                           cudaTypedefs.h) and generate its bindings; needs
//	                           no other version's headers. A version pinned
//	                           already from other headers is refused unless
//	                           -repin is given; from the same headers it is
//	                           a no-op
//	go run ./gen -check        regenerate in memory and report drift from the
//	                           committed files (exit status 1 on drift)
//	go run ./gen -list tags    print the pinned build tags (-list newest: the
//	                           one built when no tag is given)
//
// Each pinned version gets its files under build tag cudaX.Y (the newest is
// built when no tag is given): cuda/driver/zdriver_cudaX_Y.go (pure Go: types,
// enums, tables, wrappers), _cgo.go (the C trampolines), _nocgo.go (every
// call returns ErrNoDriver when cgo is off), _test.go (no-driver test of
// every function), and cuda/driver/internal/layout/zlayout_cudaX_Y*.go (the
// layout check against the real cuda.h); one loader (cuda/driver/zloader.go)
// is shared. Several pinned tags at once select the oldest of them.
// cuda/driver/ztags.go is built only under a cudaX.Y tag that no version
// pins (X from 10 to 19, or to the newest pinned major + 1, Y from 0 to 9):
// it does not compile, and go build prints an identifier naming the pinned
// tags (undefined:
// cuda_build_tag_is_not_pinned__pinned_tags_are_cuda11_8_...). Every run
// rewrites the build constraint of every generated per-version file, which
// needs no header. A run changes the manifest, the cache and the tree only
// when it succeeds as a whole.
//
// # Stages
//
// A run has four stages, in this order; each file's opening comment names
// its stage.
//
//  1. read: each version's headers are found (newGeneration in main.go:
//     the header cache, fetched into it by package headers, or -cuda DIR
//     staged by pin.go), checked (headercheck.go) and parsed with
//     modernc.org/cc/v4 (readHeaders in read.go).
//  2. model: what the headers declare becomes a model, the plain data of
//     what one version binds (newModel in model.go): types and enums
//     (model.go), #define constants (consts.go), ABI versions (abi.go),
//     parameter shapes and pointer lifetimes (shapes.go), (pointer, count)
//     pairs (pairs.go), typed void* parameters (typed.go), pointer words
//     (pointers.go) and doc comments (doxygen.go), as gen/bindings.json
//     (config.go) directs. modelHeaders runs read and model on one
//     version; generation.model runs them on each version in turn.
//  3. render: the models become the generated files' bytes
//     (generation.render in main.go, renderer.renderFiles in render.go):
//     Go through jennifer (render_go.go, render_jen.go), C and Markdown
//     through templates/ (render_c.go, render.go), build constraints
//     (constraint.go) and the //go:build lines of hand-written files
//     (bound.go).
//  4. write: the files are written all at once, or with -check compared
//     with those committed (write.go).
//
// # Libraries
//
// The CUDA libraries other than the driver (NVRTC in cuda/nvrtc) are bound
// by the same stages from their own configs, which gen/bindings.json lists
// under "libraries" (gen/nvrtc.json); library.go holds what differs: their
// header, names, result type and shared library (docs/generator.md, "Add a
// library"); libruntime.go writes each package's runtime (loader, errors,
// the wrappers' helpers), which depends on the config alone.
//
// # Templates
//
// The text of what is generated as C or Markdown is in templates/, at the
// module's top level, not in gen/: the generator's inputs sit at the top
// level beside the code that reads them (headers/ holds the pins,
// templates/ the generated text), and the generator reads the templates
// from the module root at run time, so a change to one needs no Go. Which
// file renders each template:
//
//	templates/loader.c.tmpl       render.go (renderer.loader): zloader.go's cgo preamble
//	templates/trampolines.c.tmpl  render_c.go (renderer.trampolines): each version's trampolines
//	templates/layout.c.tmpl       render_go.go (renderer.layout): the layout check's C side
//	templates/bindings.md.tmpl    render.go (renderer.docs): docs/zbindings.md
//	templates/libraries.md.tmpl   libruntime.go (generation.libraryDocs): docs/zlibraries.md
//
// # Function length
//
// No function of gen/ or headers/ is longer than 80 lines unless its doc
// comment says why, in a sentence that starts "Long because"
// (funclen_test.go checks it).
package main
