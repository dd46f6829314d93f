// Package layout checks that the generated Go types of cuda/nccl have
// the C layout: size, alignment and every field's offset, compared with
// what the C compiler says for the real nccl.h. Its files build only with
// -tags cudagen_layout and CGO_CFLAGS=-I<the header's directory> -I<the
// stand-ins of the headers nccl.h includes>; gen's TestLibraryLayout runs
// it for every pinned version whose header is in the cache.
package layout
