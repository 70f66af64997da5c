/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pc_read_file: a whole file, NUL-terminated, within its limit; a longer
 * file refused with EFBIG, a missing one with ENOENT.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "base/error.h"

#include "testutil.h"

static char dir[PC_PATH_LEN], file[PC_PATH_LEN + 16];

static int
setup(void **state)
{
	(void)state;
	if (pc_test_tmpdir(dir, sizeof(dir), "fileio") < 0)
		return -1;
	snprintf(file, sizeof(file), "%s/f", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_test_rm_rf(dir);
	return 0;
}

static void
write_bytes(size_t n)
{
	FILE *f = fopen(file, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(fputc('a' + (int)(i % 26), f), EOF);
	assert_int_equal(fclose(f), 0);
}

static void
test_read_file(void **state)
{
	/* empty, small, at the limit, and past the first 64 KiB of buffer */
	static const size_t sizes[] = { 0, 1, 100, 65535, 65536, 65537, 300000 };
	size_t len;

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		write_bytes(sizes[k]);
		char *buf = pc_read_file(file, sizes[k], &len);
		assert_non_null(buf);
		assert_int_equal(len, sizes[k]);
		assert_int_equal(buf[len], '\0');
		for (size_t i = 0; i < len; i++)
			if (buf[i] != 'a' + (int)(i % 26))
				fail_msg("size %zu: byte %zu wrong", sizes[k], i);
		free(buf);
		/* one byte over the limit is refused */
		if (sizes[k] > 0) {
			errno = 0;
			assert_null(pc_read_file(file, sizes[k] - 1, &len));
			assert_int_equal(errno, EFBIG);
		}
	}
	errno = 0;
	assert_null(pc_read_file("/nonexistent/podcap-file", 10, &len));
	assert_int_equal(errno, ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
