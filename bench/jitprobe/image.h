// read_image: the file at path, NUL-terminated, in malloc'ed memory (the
// caller frees it), its length in *n; NULL where it cannot be read.
#include <stdio.h>
#include <stdlib.h>
static char *read_image(const char *path, long *n) {
	FILE *f = fopen(path, "rb");
	if (f == NULL) return NULL;
	char *img = NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (*n = ftell(f)) >= 0) {
		rewind(f);
		img = malloc(*n + 1);
		if (img != NULL && fread(img, 1, *n, f) == (size_t)*n) {
			img[*n] = 0;
		} else {
			free(img);
			img = NULL;
		}
	}
	fclose(f);
	return img;
}
