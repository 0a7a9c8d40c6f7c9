// SPDX-License-Identifier: GPL-2.0
/*
 * t_splice - splice() and sendfile() from the device.
 *
 * Not differential: /dev/zero has no ->splice_read on 6.1 (splice fails
 * with EINVAL there), but fastzero must support it on every kernel.  The
 * reference's result is only printed as a diagnostic.
 *
 * fastzero fills the pipe with references to the zero page, so every
 * consumer of such a pipe is tried (/dev/null, a tmpfs file with and
 * without SPLICE_F_MOVE, AF_UNIX and TCP sockets, tee, another pipe,
 * vmsplice into user memory, write(2) appending to the pipe) with a write
 * wherever the data lands, and after each the zero page must still read
 * zero through a fresh read-only private mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
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

/* ---- consumers of zero-page pipe buffers ---- */

#define CHUNK	(16 * 4096)	/* one default pipe's worth */

/* The zero page, through a fresh read-only private anonymous mapping. */
static int check_zero_page(char *why)
{
	unsigned char *p = mmap(NULL, 4096, PROT_READ,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	ret = check_zero(p, 4096, why);
	munmap(p, 4096);
	return ret ? fz_fail(why, "THE ZERO PAGE IS NO LONGER ZERO") : FZ_PASS;
}

/* Read exactly @n bytes from @fd (pread from 0 if @file) into @buf. */
static int read_full(int fd, int file, unsigned char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = file ? pread(fd, buf + got, n - got, got) :
			   read(fd, buf + got, n - got);
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

/* A connected pair: AF_UNIX stream, or TCP over loopback; 0 or -errno. */
static int sock_pair(int tcp, int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l;

	if (!tcp)
		return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? -errno : 0;
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (void *)&a, alen) || listen(l, 1) ||
	    getsockname(l, (void *)&a, &alen))
		goto err;
	sv[1] = socket(AF_INET, SOCK_STREAM, 0);
	if (sv[1] < 0 || connect(sv[1], (void *)&a, alen))
		goto err;
	sv[0] = accept(l, NULL, NULL);
	if (sv[0] < 0)
		goto err;
	close(l);
	return 0;
err:
	if (l >= 0)
		close(l);
	return -errno;
}

enum consumer { C_NULL, C_FILE, C_FILE_MOVE, C_UNIX, C_TCP, C_TEE, C_PIPE,
		C_VMSPLICE, C_APPEND };

/*
 * Splice CHUNK bytes of the device into a pipe, hand the pipe to consumer
 * @c, write into wherever the data went, read everything back, and check
 * that the data is zeros and the writes are where they were written.
 */
static int consume(enum consumer c, unsigned char *buf, char *why)
{
	static const unsigned char mark[16] = "fastzero-marker";
	int p[2], q[2] = { -1, -1 }, out = -1, file = 0;
	size_t n = CHUNK, want = CHUNK;
	struct iovec iov = { buf, CHUNK };
	ssize_t r;

	/* pipes of twice CHUNK: room for the bytes written after the data */
	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, 2 * CHUNK) < 0)
		return fz_fail(why, "pipe: %s", strerror(errno));
	r = splice(dev, NULL, p[1], NULL, CHUNK, 0);
	if (r != CHUNK) {
		close(p[0]);
		close(p[1]);
		return fz_fail(why, "splice from the device returned %zd", r);
	}
	switch (c) {
	case C_NULL:
		out = open("/dev/null", O_WRONLY);
		r = splice(p[0], NULL, out, NULL, CHUNK, 0);
		close(out);
		out = -1;
		want = 0;
		break;
	case C_FILE:
	case C_FILE_MOVE:
		out = memfd_create("fz_consume", 0);
		r = splice(p[0], NULL, out, NULL, CHUNK,
			   c == C_FILE_MOVE ? SPLICE_F_MOVE : 0);
		if (r == CHUNK && pwrite(out, mark, sizeof(mark), 4096) != sizeof(mark))
			r = -1;
		file = 1;
		break;
	case C_UNIX:
	case C_TCP:
		r = sock_pair(c == C_TCP, q);
		if (r)
			break;
		r = splice(p[0], NULL, q[1], NULL, CHUNK, 0);
		out = q[0];
		break;
	case C_TEE:
	case C_PIPE:
		if (pipe(q) || fcntl(q[1], F_SETPIPE_SZ, 2 * CHUNK) < 0)
			r = -1;
		else if (c == C_TEE)
			r = tee(p[0], q[1], CHUNK, 0);
		else
			r = splice(p[0], NULL, q[1], NULL, CHUNK, 0);
		if (r == CHUNK && write(q[1], mark, sizeof(mark)) != sizeof(mark))
			r = -1;
		out = q[0];
		n += sizeof(mark);
		break;
	case C_VMSPLICE:
		r = vmsplice(p[0], &iov, 1, 0);
		if (r == CHUNK)
			memcpy(buf + 4096, mark, sizeof(mark));
		want = 0;
		break;
	case C_APPEND:
		r = write(p[1], mark, sizeof(mark)) == sizeof(mark) ? CHUNK : -1;
		out = dup(p[0]);
		n += sizeof(mark);
		break;
	}
	if (r != CHUNK) {
		want = 0;
		r = fz_fail(why, "consumer returned %zd (%s)", r, strerror(errno));
	} else {
		r = FZ_PASS;
	}
	if (r == FZ_PASS && want && read_full(out, file, buf, n))
		r = fz_fail(why, "could not read %zu bytes back", n);
	if (r == FZ_PASS && (c == C_FILE || c == C_FILE_MOVE || c == C_VMSPLICE)) {
		if (memcmp(buf + 4096, mark, sizeof(mark)))
			r = fz_fail(why, "the write into the data was lost");
		memset(buf + 4096, 0, sizeof(mark));
	}
	if (r == FZ_PASS && (c == C_TEE || c == C_PIPE || c == C_APPEND) &&
	    memcmp(buf + CHUNK, mark, sizeof(mark)))
		r = fz_fail(why, "the bytes written after the data are wrong");
	if (r == FZ_PASS && c != C_NULL && check_zero(buf, CHUNK, why))
		r = FZ_FAIL;
	if (c == C_TEE && r == FZ_PASS && read_full(p[0], 0, buf, CHUNK))
		r = fz_fail(why, "tee source: could not read the data");
	if (c == C_TEE && r == FZ_PASS && check_zero(buf, CHUNK, why))
		r = FZ_FAIL;
	close(p[0]);
	close(p[1]);
	if (out >= 0)
		close(out);
	if (q[0] >= 0 && q[0] != out)
		close(q[0]);
	if (q[1] >= 0)
		close(q[1]);
	return r;
}

static int test_consumer(const void *arg, char *why)
{
	static unsigned char buf[CHUNK + 4096];
	int ret = consume(*(const enum consumer *)arg, buf, why);

	return ret == FZ_PASS ? check_zero_page(why) : ret;
}

/* sendfile() to a TCP socket, then the zero page. */
static int test_sendfile_tcp(const void *arg, char *why)
{
	static unsigned char buf[CHUNK];
	int sv[2], err = sock_pair(1, sv), ret = FZ_PASS;
	ssize_t r;

	(void)arg;
	if (err)
		return fz_fail(why, "TCP loopback pair: %s", strerror(-err));
	r = sendfile(sv[1], dev, NULL, CHUNK);
	if (r != CHUNK)
		ret = fz_fail(why, "sendfile returned %zd (%s)", r, strerror(errno));
	else if (read_full(sv[0], 0, buf, CHUNK))
		ret = fz_fail(why, "could not read %d bytes back", CHUNK);
	else if (check_zero(buf, CHUNK, why))
		ret = FZ_FAIL;
	close(sv[0]);
	close(sv[1]);
	return ret == FZ_PASS ? check_zero_page(why) : ret;
}

static const struct {
	const char *name;
	enum consumer c;
} consumers[] = {
	{ "dev_null", C_NULL }, { "tmpfs_file_write_over", C_FILE },
	{ "tmpfs_file_move_write_over", C_FILE_MOVE }, { "af_unix", C_UNIX },
	{ "tcp_loopback", C_TCP }, { "tee_then_append", C_TEE },
	{ "pipe_then_append", C_PIPE }, { "vmsplice_write_over", C_VMSPLICE },
	{ "write_appends_to_pipe", C_APPEND },
};

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
	for (i = 0; i < FZ_ARRAY_SIZE(consumers); i++)
		fz_run(test_consumer, &consumers[i].c, "splice_pipe_to_%s_zero_page_intact",
		       consumers[i].name);
	fz_run(test_sendfile_tcp, NULL, "sendfile_tcp_zero_page_intact");

	return fz_exit();
}
