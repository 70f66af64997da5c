/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs a fuzz target once on each file given (directories: each file in
 * them), without libFuzzer: so any compiler builds the targets, and the
 * seed corpora and every input that once found a bug (tests/fuzz/TARGET/)
 * are replayed by the unit suite, under the sanitizers in build-asan/.
 * Each input is copied into a buffer of exactly its size, so a read past
 * its end is caught.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t n;
	FILE *f;

	f = fopen(path, "rb");
	if (f == NULL || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	/* exactly the input's size (malloc(0) may return NULL) */
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size) {
		fprintf(stderr, "%s: short read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_dir(const char *dir, unsigned *count)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	struct dirent *e;
	struct stat st;
	int rc = 0;
	DIR *d;

	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));
			if (nn == NULL) {
				rc = -1;
				break;
			}
			names = nn;
		}
		if ((names[n] = strdup(e->d_name)) == NULL) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	/* sorted, so a failure names the same input every time */
	qsort(names, n, sizeof(*names), cmp);
	for (i = 0; i < n && rc == 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		rc = run_file(path);
		(*count)++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned count = 0;
	struct stat st;
	int i;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) != 0 :
		    (count++, run_file(argv[i]) != 0))
			return 1;
	}
	if (count == 0) {
		fprintf(stderr, "no inputs to replay\n");
		return 1;
	}
	printf("%u inputs replayed\n", count);
	return 0;
}
