// SPDX-License-Identifier: GPL-2.0
/*
 * t_splice - splice() and sendfile() from the device.
 *
 * Not differential: /dev/zero has no ->splice_read on 6.1 (splice fails
 * with EINVAL there), but fastzero must support it on every kernel.  The
 * reference's result is only printed as a diagnostic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "fztest.h"

#define PIPE_CAP	65536	/* default pipe capacity */

static int dev, ref;

enum xfer { SPLICE, SPLICE_OFF, SPLICE_NONBLOCK, SENDFILE_PIPE, SENDFILE_FILE };

struct xfer_case {
	const char *name;
	enum xfer how;
	size_t len;
};

static ssize_t xfer_once(enum xfer how, int in, int out, size_t len)
{
	loff_t off = 4096;
	ssize_t ret;

	switch (how) {
	case SPLICE:
		ret = splice(in, NULL, out, NULL, len, 0);
		break;
	case SPLICE_OFF:
		ret = splice(in, &off, out, NULL, len, 0);
		break;
	case SPLICE_NONBLOCK:
		ret = splice(in, NULL, out, NULL, len, SPLICE_F_NONBLOCK);
		break;
	default:
		ret = sendfile(out, in, NULL, len);
		break;
	}
	return ret < 0 ? -errno : ret;
}

/*
 * One transfer from @in into a new pipe or memfd; on success *@out is the
 * fd to read the data back from (pipe read end, or the memfd).
 */
static ssize_t xfer(const struct xfer_case *c, int in, int *out)
{
	ssize_t ret;
	int p[2];

	if (c->how == SENDFILE_FILE) {
		*out = memfd_create("fz_sendfile", 0);
		if (*out < 0)
			return -errno;
		ret = xfer_once(c->how, in, *out, c->len);
	} else {
		if (pipe(p))
			return -errno;
		*out = p[0];
		ret = xfer_once(c->how, in, p[1], c->len);
		close(p[1]);
	}
	if (ret < 0)
		close(*out);
	return ret;
}

/* Read @n bytes back from @fd, check them, and check nothing else is there. */
static int check_drained(int fd, int is_file, size_t n, char *why)
{
	size_t len = n + 2 * FZ_GUARD, got = 0;
	unsigned char *buf = fz_mmap(len, PROT_READ | PROT_WRITE);
	unsigned char extra;
	int ret, left = 0;
	ssize_t r;

	if (!buf)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill_guard(buf + FZ_GUARD, n, FZ_GUARD);
	while (got < n) {
		r = is_file ? pread(fd, buf + FZ_GUARD + got, n - got, got) :
			      read(fd, buf + FZ_GUARD + got, n - got);
		if (r <= 0)
			break;
		got += r;
	}
	if (is_file)
		left = pread(fd, &extra, 1, got);
	else if (ioctl(fd, FIONREAD, &left))
		left = -1;
	if (got != n)
		ret = fz_fail(why, "could read back only %zu of %zu bytes", got, n);
	else if (left != 0)
		ret = fz_fail(why, "more data than the returned count %zu", n);
	else if (check_zero(buf + FZ_GUARD, n, why))
		ret = FZ_FAIL;
	else
		ret = check_guard(buf + FZ_GUARD, n, FZ_GUARD, why);
	fz_munmap(buf, len);
	return ret;
}

static int test_xfer(const void *arg, char *why)
{
	const struct xfer_case *c = arg;
	int is_file = c->how == SENDFILE_FILE, out, ret;
	size_t expect = c->len;
	char a[FZ_RETLEN];
	ssize_t n;

	n = xfer(c, ref, &out);
	fz_diag("  %s: %s returned %s", c->name, fz_ref_name,
		fz_strret(a, sizeof(a), n, -n));
	if (n >= 0)
		close(out);

	n = xfer(c, dev, &out);
	if (n < 0)
		return fz_fail(why, "%s returned %s", fz_dev_name,
			       fz_strret(a, sizeof(a), n, -n));
	if (!is_file && expect > PIPE_CAP)
		expect = PIPE_CAP;
	if ((n == 0 && expect) || (size_t)n > expect)
		ret = fz_fail(why, "returned %zd, expected 1..%zu", n, expect);
	else
		ret = check_drained(out, is_file, n, why);
	if (ret == FZ_PASS && (size_t)n != expect)
		fz_diag("  short transfer: %zd of %zu", n, expect);
	close(out);
	return ret;
}

/* SPLICE_F_NONBLOCK into a full pipe must fail with EAGAIN. */
static int test_splice_full_pipe(const void *arg, char *why)
{
	char a[FZ_RETLEN];
	ssize_t n, total = 0;
	int p[2];

	(void)arg;
	if (pipe(p))
		return fz_fail(why, "pipe: %s", strerror(errno));
	do {
		n = xfer_once(SPLICE_NONBLOCK, dev, p[1], PIPE_CAP);
		total += n > 0 ? n : 0;
	} while (n > 0 && total <= 16 * PIPE_CAP);
	close(p[0]);
	close(p[1]);
	if (n == -EAGAIN && total >= PIPE_CAP)
		return FZ_PASS;
	return fz_fail(why, "after %zd bytes: %s, expected -1 (EAGAIN)", total,
		       fz_strret(a, sizeof(a), n, -n));
}

/* Many splices through one pipe: 16 MiB, every byte checked. */
static int test_splice_stream(const void *arg, char *why)
{
	size_t total = 16 * FZ_MiB, done = 0;
	char sub[FZ_WHYLEN];
	int p[2], ret = FZ_PASS;
	ssize_t n;

	(void)arg;
	if (pipe(p))
		return fz_fail(why, "pipe: %s", strerror(errno));
	while (done < total && ret == FZ_PASS) {
		n = splice(dev, NULL, p[1], NULL, 65536 - done % 4093, 0);
		if (n <= 0) {
			ret = fz_fail(why, "splice at %zu returned %zd (%s)",
				      done, n, strerror(errno));
			break;
		}
		if (check_drained(p[0], 0, n, sub))
			ret = fz_fail(why, "at %zu: %s", done, sub);
		done += n;
	}
	close(p[0]);
	close(p[1]);
	return ret;
}

static const struct xfer_case cases[] = {
	{ "splice_1", SPLICE, 1 },
	{ "splice_100", SPLICE, 100 },
	{ "splice_4096", SPLICE, 4096 },
	{ "splice_4097", SPLICE, 4097 },
	{ "splice_65536", SPLICE, 65536 },
	{ "splice_1MiB", SPLICE, FZ_MiB },
	{ "splice_0", SPLICE, 0 },
	{ "splice_with_offset", SPLICE_OFF, 10000 },
	{ "splice_nonblock", SPLICE_NONBLOCK, 20000 },
	{ "sendfile_pipe_1", SENDFILE_PIPE, 1 },
	{ "sendfile_pipe_65536", SENDFILE_PIPE, 65536 },
	{ "sendfile_file_4097", SENDFILE_FILE, 4097 },
	{ "sendfile_file_1MiB_plus_3", SENDFILE_FILE, FZ_MiB + 3 },
};

int main(int argc, char **argv)
{
	size_t i;

	fz_setup(argc, argv, &dev, &ref);

	for (i = 0; i < FZ_ARRAY_SIZE(cases); i++)
		fz_run(test_xfer, &cases[i], "%s", cases[i].name);
	fz_run(test_splice_full_pipe, NULL, "splice_nonblock_full_pipe_eagain");
	fz_run(test_splice_stream, NULL, "splice_stream_16MiB");

	return fz_exit();
}
