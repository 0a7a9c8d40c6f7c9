// SPDX-License-Identifier: GPL-2.0
/*
 * t_splice - splice() and sendfile() from the device, and into it.
 *
 * From the device, not differential: /dev/zero has no ->splice_read on 6.1
 * (splice fails with EINVAL there), but fastzero must support it on every
 * kernel.  The reference's result is only printed as a diagnostic.
 *
 * Into the device, differential: splice from a pipe, with and without an
 * offset, of length 0, non-blocking from an empty pipe, and sendfile()
 * from a file must return what the same call into /dev/zero returns on
 * this kernel (EINVAL on 6.1, whose /dev/zero has no ->splice_write) and
 * leave as many bytes in the pipe and move the file offset as far.
 *
 * fastzero fills the pipe with references to a zeroed page of its own, so
 * every consumer of such a pipe is tried (/dev/null, a tmpfs file with and
 * without SPLICE_F_MOVE, AF_UNIX and TCP sockets, tee, another pipe,
 * vmsplice into user memory, write(2) appending to the pipe) with a write
 * wherever the data lands, and after each the module's page must still
 * read zero through a new splice, and the kernel's zero page through a
 * fresh read-only private mapping.  Readers that take 1, 4095 and 4097
 * bytes at a time see zeros and the exact count.  With the module (and
 * FZ_KO) the consumers run again with the module reloaded splice_huge=1:
 * buffers up to 2 MiB long, in pipes large enough to hold them.  The pages
 * the allocator hands out while the device is spliced to /dev/null are
 * counted: fastzero must need none per 4 KiB (printed for /dev/zero).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
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

/* ---- what splicing costs the page allocator ---- */

#define ALLOC_LEN	(64 * FZ_MiB)

static long pgalloc_total(void)
{
	static const char *const keys[] = {
		"pgalloc_dma ", "pgalloc_dma32 ", "pgalloc_normal ", "pgalloc_movable ",
	};
	long sum = 0, v;
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(keys); i++) {
		v = fz_file_long("/proc/vmstat", keys[i]);
		if (v > 0)
			sum += v;
	}
	return sum;
}

/*
 * Pages the kernel allocates while 64 MiB go from the device through a
 * pipe to /dev/null: a device that lends a page needs none per 4 KiB, one
 * that copies (copy_splice_read()) one per 4 KiB.  fastzero must lend;
 * for another device the count is only printed (the upstream proof
 * compares it between the patched and the unpatched /dev/zero).
 */
static int test_splice_allocs(const void *arg, char *why)
{
	int p[2], null = open("/dev/null", O_WRONLY), ret = FZ_PASS;
	size_t done = 0;
	long before, pages;
	ssize_t n, m, k;

	(void)arg;
	if (null < 0)
		return fz_fail(why, "open /dev/null: %s", strerror(errno));
	if (pipe(p)) {
		close(null);
		return fz_fail(why, "pipe: %s", strerror(errno));
	}
	before = pgalloc_total();
	while (done < ALLOC_LEN && ret == FZ_PASS) {
		n = splice(dev, NULL, p[1], NULL, PIPE_CAP, 0);
		if (n <= 0) {
			ret = fz_fail(why, "splice at %zu returned %zd (%s)", done, n,
				      strerror(errno));
			break;
		}
		for (m = 0; m < n; m += k) {
			k = splice(p[0], NULL, null, NULL, n - m, 0);
			if (k <= 0) {
				ret = fz_fail(why, "splice to /dev/null returned %zd (%s)",
					      k, strerror(errno));
				break;
			}
		}
		done += n;
	}
	pages = pgalloc_total() - before;
	close(p[0]);
	close(p[1]);
	close(null);
	if (ret != FZ_PASS)
		return ret;
	fz_diag("  %s: %ld pages allocated while %zu MiB were spliced to /dev/null (%.1f per MiB)",
		fz_dev_name, pages, ALLOC_LEN / FZ_MiB, (double)pages * FZ_MiB / ALLOC_LEN);
	if (fz_module && pages > (long)(ALLOC_LEN / 4096 / 16))
		return fz_fail(why, "%ld pages allocated for %zu MiB spliced: the device copies instead of lending",
			       pages, ALLOC_LEN / FZ_MiB);
	return FZ_PASS;
}

/* ---- consumers of zero-page pipe buffers ---- */

/* One default pipe's worth; with 2 MiB buffers, one 2 MiB buffer and a bit. */
static size_t chunk = 16 * 4096;
#define CHUNK	chunk
#define CHUNK_MAX	(2 * FZ_MiB + 8192)

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

struct reader {
	pthread_t tid;
	int fd, err;
	unsigned char *buf;
	size_t n;
};

static int read_full(int fd, int file, unsigned char *buf, size_t n);

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->err = read_full(r->fd, 0, r->buf, r->n);
	return NULL;
}

/* splice(@in -> @out) until @n bytes moved: the total, or -1. */
static ssize_t splice_flags(int in, int out, size_t n, unsigned int flags)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = splice(in, NULL, out, NULL, n - done, flags);
		if (r <= 0)
			return done ? (ssize_t)done : -1;
		done += r;
	}
	return done;
}

static ssize_t splice_all(int in, int out, size_t n)
{
	return splice_flags(in, out, n, 0);
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
	struct reader rd;
	struct iovec iov = { buf, CHUNK };
	ssize_t r;

	/* pipes of twice CHUNK: room for the bytes written after the data */
	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, 2 * CHUNK) < 0)
		return fz_fail(why, "pipe: %s", strerror(errno));
	for (n = 0, r = 1; n < CHUNK && r > 0; n += r)
		r = splice(dev, NULL, p[1], NULL, CHUNK - n, 0);
	r = n;
	n = CHUNK;
	if (r != (ssize_t)CHUNK) {
		close(p[0]);
		close(p[1]);
		return fz_fail(why, "splice from the device returned %zd", r);
	}
	switch (c) {
	case C_NULL:
		out = open("/dev/null", O_WRONLY);
		r = splice_all(p[0], out, CHUNK);
		close(out);
		out = -1;
		want = 0;
		break;
	case C_FILE:
	case C_FILE_MOVE:
		out = memfd_create("fz_consume", 0);
		r = splice_flags(p[0], out, CHUNK,
				 c == C_FILE_MOVE ? SPLICE_F_MOVE : 0);
		if (r == (ssize_t)CHUNK && pwrite(out, mark, sizeof(mark), 4096) != sizeof(mark))
			r = -1;
		file = 1;
		break;
	case C_UNIX:
	case C_TCP:
		r = fz_sock_pair(c == C_TCP, q);
		if (r)
			break;
		/* a reader meanwhile: CHUNK may be more than the socket buffers */
		rd = (struct reader){ .fd = q[0], .buf = buf, .n = CHUNK };
		pthread_create(&rd.tid, NULL, reader_main, &rd);
		r = splice_all(p[0], q[1], CHUNK);
		pthread_join(rd.tid, NULL);
		if (r == (ssize_t)CHUNK && rd.err)
			r = -1;
		want = 0;	/* read already */
		out = q[0];
		break;
	case C_TEE:
	case C_PIPE:
		if (pipe(q) || fcntl(q[1], F_SETPIPE_SZ, 2 * CHUNK) < 0)
			r = -1;
		else if (c == C_TEE)
			r = tee(p[0], q[1], CHUNK, 0);
		else
			r = splice_all(p[0], q[1], CHUNK);
		if (r == (ssize_t)CHUNK && write(q[1], mark, sizeof(mark)) != sizeof(mark))
			r = -1;
		out = q[0];
		n += sizeof(mark);
		break;
	case C_VMSPLICE:
		for (n = 0, r = 1; n < CHUNK && r > 0; n += r) {
			iov = (struct iovec){ buf + n, CHUNK - n };
			r = vmsplice(p[0], &iov, 1, 0);
		}
		r = n;
		n = CHUNK;
		if (r == (ssize_t)CHUNK)
			memcpy(buf + 4096, mark, sizeof(mark));
		want = 0;
		break;
	case C_APPEND:
		r = write(p[1], mark, sizeof(mark)) == sizeof(mark) ? (ssize_t)CHUNK : -1;
		out = dup(p[0]);
		n += sizeof(mark);
		break;
	}
	if (r != (ssize_t)CHUNK) {
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

/* The page the module lends: a new splice of it still reads zero. */
static int check_lent_page(char *why)
{
	static unsigned char buf[CHUNK_MAX];
	int p[2], ret = FZ_PASS;
	ssize_t n;

	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, 2 * CHUNK) < 0)
		return fz_fail(why, "pipe: %s", strerror(errno));
	n = splice_all(dev, p[1], CHUNK);
	if (n != (ssize_t)CHUNK)
		ret = fz_fail(why, "splice returned %zd", n);
	else if (read_full(p[0], 0, buf, CHUNK))
		ret = fz_fail(why, "could not read the splice back");
	else if (check_zero(buf, CHUNK, why))
		ret = fz_fail(why, "THE MODULE'S ZERO PAGE IS NO LONGER ZERO: %s", why);
	close(p[0]);
	close(p[1]);
	return ret;
}

static int test_consumer(const void *arg, char *why)
{
	static unsigned char buf[CHUNK_MAX + 4096];
	int ret = consume(*(const enum consumer *)arg, buf, why);

	if (ret == FZ_PASS)
		ret = check_lent_page(why);
	return ret == FZ_PASS ? check_zero_page(why) : ret;
}

/*
 * A reader that takes @arg bytes at a time: every read returns exactly
 * that much (the last the rest), zeros, and the pipe ends empty.
 */
#define PARTIAL_EDGE	(64 * FZ_KiB)

static int test_partial(const void *arg, char *why)
{
	static unsigned char buf[8192];
	size_t step = *(const size_t *)arg, got = 0, k;
	int p[2], ret = FZ_PASS, left = 0;
	ssize_t n;

	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, 2 * CHUNK) < 0)
		return fz_fail(why, "pipe: %s", strerror(errno));
	n = splice_all(dev, p[1], CHUNK);
	if (n != (ssize_t)CHUNK) {
		ret = fz_fail(why, "splice returned %zd", n);
		goto out;
	}
	while (got < CHUNK && ret == FZ_PASS) {
		k = CHUNK - got < step ? CHUNK - got : step;
		/*
		 * Quick runs read a 2 MiB buffer a byte at a time only near
		 * its start and its end: two million read()s are a minute on a
		 * KASAN kernel, and the offsets between take the same path.
		 */
		if (fz_quick && step == 1 && CHUNK > 4 * PARTIAL_EDGE &&
		    got >= PARTIAL_EDGE && got < CHUNK - PARTIAL_EDGE)
			k = CHUNK - PARTIAL_EDGE - got < sizeof(buf) ?
			    CHUNK - PARTIAL_EDGE - got : sizeof(buf);
		memset(buf, 0xa5, k);
		n = read(p[0], buf, k);
		if (n != (ssize_t)k)
			ret = fz_fail(why, "read of %zu at %zu returned %zd", k, got, n);
		else if (check_zero(buf, k, why))
			ret = FZ_FAIL;
		got += k;
	}
	if (ret == FZ_PASS && (ioctl(p[0], FIONREAD, &left) || left))
		ret = fz_fail(why, "%d bytes left in the pipe", left);
out:
	close(p[0]);
	close(p[1]);
	return ret;
}

static const size_t steps[] = { 1, 4095, 4097 };

/* sendfile() to a TCP socket, then the zero page. */
static int test_sendfile_tcp(const void *arg, char *why)
{
	static unsigned char buf[CHUNK_MAX];
	int sv[2], err = fz_sock_pair(1, sv), ret = FZ_PASS;
	ssize_t r;

	(void)arg;
	if (err)
		return fz_fail(why, "TCP loopback pair: %s", strerror(-err));
	r = sendfile(sv[1], dev, NULL, CHUNK);
	if (r != (ssize_t)CHUNK)
		ret = fz_fail(why, "sendfile returned %zd (%s)", r, strerror(errno));
	else if (read_full(sv[0], 0, buf, CHUNK))
		ret = fz_fail(why, "could not read %zu bytes back", CHUNK);
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

/* The consumers and partial readers, with names ending in @suffix. */
static void consumer_tests(const char *suffix)
{
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(consumers); i++)
		fz_run(test_consumer, &consumers[i].c, "splice_pipe_to_%s_zero_pages_intact%s",
		       consumers[i].name, suffix);
	for (i = 0; i < FZ_ARRAY_SIZE(steps); i++)
		fz_run(test_partial, &steps[i], "splice_then_read_%zu_bytes_at_a_time%s",
		       steps[i], suffix);
}

static int test_unit(const void *arg, char *why)
{
	char val[32];

	if (fz_read_file(FZ_POLICY "/splice_unit", val, sizeof(val)))
		return fz_fail(why, "cannot read splice_unit");
	if (strtoul(val, NULL, 10) != *(const size_t *)arg)
		return fz_fail(why, "splice_unit is %s, expected %zu", val,
			       *(const size_t *)arg);
	return FZ_PASS;
}

/*
 * The consumers again with buffers of up to 2 MiB: the module reloaded
 * with splice_huge=1, CHUNK 2 MiB + 8 KiB (one whole buffer and a short
 * one), pipes of twice that.  Then the module as the harness loaded it.
 */
static void huge_buffer_tests(void)
{
	static const size_t huge = 2 * FZ_MiB, small = 4096;
	int err;

	err = fz_reload_module("splice_huge=1", &dev);
	if (err) {
		fz_report(FZ_FAIL, "reload_splice_huge_1", strerror(-err));
		return;
	}
	fz_run(test_unit, &huge, "splice_huge_1_lends_2MiB_buffers");
	chunk = 2 * FZ_MiB + 8192;
	consumer_tests("_2MiB_buffers");
	chunk = 16 * 4096;
	err = fz_reload_module("", &dev);
	if (err)
		fz_report(FZ_FAIL, "reload_default", strerror(-err));
	else
		fz_run(test_unit, &small, "default_lends_4KiB_buffers");
}

/*
 * The lent pages' bound (splice.c, FZ_LENT_REFS_MAX): each CPU lends its
 * own page, each with its own bound, and a splice that finds its page at
 * the bound copies as /dev/zero does instead of failing.  A holder pinned
 * to CPU 0 fills HOLD_PIPES pipes of 256 slots, more buffers than the
 * bound; stats/splice_copied tells that the bound was reached.  Held in
 * this process, stats/read_bytes must grow by every byte spliced, the ones
 * lent before the bound and the ones copied after it alike.
 */
#define SPLICE_COPIED	"/sys/class/misc/fastzero/stats/splice_copied"
#define READ_BYTES	"/sys/class/misc/fastzero/stats/read_bytes"
#define HOLD_SLOTS	256
#define HOLD_PIPES	272	/* 69632 buffers > FZ_LENT_REFS_MAX (65536) */
#define BOUND_LEN	(16 * 4096)

/* Run on @cpu only, or with @cpu < 0 on every CPU again. */
static int pin_cpu(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (i == cpu || cpu < 0)
			CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Fill HOLD_PIPES pipes from @fd, 4 KiB per buffer: 0 or an errno; *@n
 * pipes are open.
 */
static int hold_buffers(int fd, int (*fds)[2], int *n)
{
	ssize_t r;

	for (*n = 0; *n < HOLD_PIPES; ++*n) {
		if (pipe(fds[*n]))
			return errno;
		errno = 0;
		if (fcntl(fds[*n][1], F_SETPIPE_SZ, HOLD_SLOTS * 4096) < 0)
			r = -1;
		else
			r = splice(fd, NULL, fds[*n][1], NULL, HOLD_SLOTS * 4096,
				   SPLICE_F_NONBLOCK);
		if (r != HOLD_SLOTS * 4096) {
			fz_diag("  holder: pipe %d: F_SETPIPE_SZ/splice returned %zd (%s)",
				*n, r, r < 0 ? strerror(errno) : "short");
			++*n;
			return r < 0 && errno ? errno : EIO;
		}
	}
	return 0;
}

static void release_buffers(int (*fds)[2], int n)
{
	while (n--) {
		close(fds[n][0]);
		close(fds[n][1]);
	}
}

/* One splice of BOUND_LEN from @fd into a new pipe: reads back zeros. */
static int splice_zeros(int fd, const char *who, char *why)
{
	static unsigned char buf[BOUND_LEN];
	int p[2], ret = FZ_PASS;
	ssize_t n;

	if (pipe(p))
		return fz_fail(why, "pipe: %s", strerror(errno));
	n = splice(fd, NULL, p[1], NULL, BOUND_LEN, 0);
	if (n != BOUND_LEN)
		ret = fz_fail(why, "%s: splice returned %zd (%s), expected %d", who,
			      n, n < 0 ? strerror(errno) : "short", BOUND_LEN);
	else if (read_full(p[0], 0, buf, BOUND_LEN))
		ret = fz_fail(why, "%s: could not read the splice back", who);
	else if (check_zero(buf, BOUND_LEN, why))
		ret = fz_fail(why, "%s: not zeros", who);
	close(p[0]);
	close(p[1]);
	return ret;
}

/* The reference's result, printed only (6.1's /dev/zero cannot splice). */
static void ref_diag(void)
{
	char why[FZ_WHYLEN] = "";

	fz_diag("  %s: %s", fz_ref_name,
		splice_zeros(ref, fz_ref_name, why) == FZ_PASS ? "zeros" : why);
}

struct bound_case {
	int other;	/* the second splicer is another process */
	int cpu;	/* CPU of the second splice (the holder is on 0) */
};

static int test_bound(const void *arg, char *why)
{
	const struct bound_case *c = arg;
	static int fds[HOLD_PIPES][2];
	int ready[2], ret, err = 0, held = 0;
	long before, after, rb_before = -1, rb_after = -1;
	pid_t holder = 0;
	char b;

	if (!fz_module)
		return fz_skip(why, "the bound is the module's (FZ_MODULE=0)");
	if (sysconf(_SC_NPROCESSORS_ONLN) <= c->cpu)
		return fz_harness_missing(why, "needs %d CPUs", c->cpu + 1);
	ret = fz_need_root(why);	/* pipe sizes, stats */
	if (ret != FZ_PASS)
		return ret;
	if (pipe(ready))
		return fz_fail(why, "pipe: %s", strerror(errno));
	fflush(stdout);
	if (c->other) {
		holder = fork();
		if (holder < 0)
			return fz_fail(why, "fork: %s", strerror(errno));
	}
	if (holder == 0) {	/* the holder: this process or the child */
		rb_before = fz_file_long(READ_BYTES, NULL);
		if (pin_cpu(0))
			err = errno;
		else
			err = hold_buffers(dev, fds, &held);
		rb_after = fz_file_long(READ_BYTES, NULL);
		if (c->other) {
			b = (char)err;
			if (write(ready[1], &b, 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
	} else if (read(ready[0], &b, 1) != 1) {
		err = EIO;
	} else {
		err = (unsigned char)b;
	}
	close(ready[0]);
	close(ready[1]);
	before = fz_file_long(SPLICE_COPIED, NULL);
	if (err) {
		ret = fz_fail(why, "the holder could not fill %d pipes of %d buffers: %s",
			      HOLD_PIPES, HOLD_SLOTS, strerror(err));
	} else if (before < 0) {
		ret = fz_fail(why, "no %s", SPLICE_COPIED);
	} else if (pin_cpu(c->cpu)) {
		ret = fz_fail(why, "sched_setaffinity: %s", strerror(errno));
	} else {
		ret = splice_zeros(dev, fz_dev_name, why);
		after = fz_file_long(SPLICE_COPIED, NULL);
		fz_diag("  holder %s on CPU 0, %d buffers; splice on CPU %d: stats/splice_copied %ld -> %ld",
			c->other ? "another process" : "this process",
			HOLD_PIPES * HOLD_SLOTS, c->cpu, before, after);
		if (ret == FZ_PASS && !c->cpu && after <= before)
			ret = fz_fail(why, "CPU 0's bound not reached after %d buffers: splice_copied %ld -> %ld",
				      HOLD_PIPES * HOLD_SLOTS, before, after);
		if (ret == FZ_PASS && c->cpu && after != before)
			ret = fz_fail(why, "CPU %d's splice copied (splice_copied %ld -> %ld): CPU 0's holder reached it",
				      c->cpu, before, after);
		if (!c->other)
			fz_diag("  stats/read_bytes grew by %ld while %d bytes were spliced",
				rb_after - rb_before, held * HOLD_SLOTS * 4096);
		if (ret == FZ_PASS && !c->other &&
		    rb_after - rb_before != (long)held * HOLD_SLOTS * 4096)
			ret = fz_fail(why, "stats/read_bytes grew by %ld, %ld bytes were spliced",
				      rb_after - rb_before, (long)held * HOLD_SLOTS * 4096);
		ref_diag();
	}
	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
	}
	release_buffers(fds, held);
	pin_cpu(-1);
	return ret;
}

static const struct bound_case bound_self = { 0, 0 };
static const struct bound_case bound_other = { 1, 0 };
static const struct bound_case bound_other_cpu = { 1, 1 };

enum into { INTO_SPLICE, INTO_SPLICE_OFF, INTO_SPLICE_EMPTY_NONBLOCK,
	    INTO_SENDFILE };

struct into_case {
	const char *name;
	enum into how;
	size_t fill, len;
};

struct into_result {
	ssize_t ret;	/* count, or -errno */
	long left;	/* bytes left in the pipe, or the file offset */
};

/* One transfer of @c into @to: its return and what it left behind. */
static int into_once(const struct into_case *c, int to, struct into_result *r,
		     char *why)
{
	static unsigned char junk[3 * 65536];
	loff_t off = 4096;
	int p[2], fd = -1, left = 0;

	memset(junk, 0x5a, sizeof(junk));
	if (c->how == INTO_SENDFILE) {
		fd = memfd_create("fz_into", 0);
		if (fd < 0 || write(fd, junk, c->fill) != (ssize_t)c->fill ||
		    lseek(fd, 0, SEEK_SET))
			return fz_fail(why, "memfd: %s", strerror(errno));
		r->ret = sendfile(to, fd, NULL, c->len);
		r->ret = r->ret < 0 ? -errno : r->ret;
		r->left = lseek(fd, 0, SEEK_CUR);
		close(fd);
		return FZ_PASS;
	}
	if (pipe2(p, c->how == INTO_SPLICE_EMPTY_NONBLOCK ? O_NONBLOCK : 0))
		return fz_fail(why, "pipe: %s", strerror(errno));
	if (c->fill && write(p[1], junk, c->fill) != (ssize_t)c->fill) {
		close(p[0]);
		close(p[1]);
		return fz_fail(why, "filling the pipe: %s", strerror(errno));
	}
	r->ret = splice(p[0], NULL, to, c->how == INTO_SPLICE_OFF ? &off : NULL,
			c->len, c->how == INTO_SPLICE_EMPTY_NONBLOCK ?
			SPLICE_F_NONBLOCK : 0);
	r->ret = r->ret < 0 ? -errno : r->ret;
	if (ioctl(p[0], FIONREAD, &left))
		left = -1;
	r->left = left;
	close(p[0]);
	close(p[1]);
	return FZ_PASS;
}

/* Into the device as into /dev/zero: the same return, the same leftovers. */
static int test_into(const void *arg, char *why)
{
	const struct into_case *c = arg;
	struct into_result d, r;
	char a[FZ_RETLEN], b[FZ_RETLEN];

	if (into_once(c, ref, &r, why) || into_once(c, dev, &d, why))
		return FZ_FAIL;
	fz_diag("  %s: %s %s (left %ld), %s %s (left %ld)", c->name,
		fz_dev_name, fz_strret(a, sizeof(a), d.ret, -d.ret), d.left,
		fz_ref_name, fz_strret(b, sizeof(b), r.ret, -r.ret), r.left);
	if (d.ret != r.ret || d.left != r.left)
		return fz_fail(why, "%s returned %s leaving %ld, %s %s leaving %ld",
			       fz_dev_name, a, d.left, fz_ref_name, b, r.left);
	return FZ_PASS;
}

static const struct into_case into_cases[] = {
	{ "splice_into_device_as_dev_zero", INTO_SPLICE, 3 * 4096 + 13, 65536 },
	{ "splice_into_device_part_of_the_pipe_as_dev_zero", INTO_SPLICE, 65536, 4097 },
	{ "splice_into_device_at_an_offset_as_dev_zero", INTO_SPLICE_OFF, 8192, 8192 },
	{ "splice_into_device_length_0_as_dev_zero", INTO_SPLICE, 4096, 0 },
	{ "splice_into_device_nonblock_empty_pipe_as_dev_zero",
	  INTO_SPLICE_EMPTY_NONBLOCK, 0, 4096 },
	{ "sendfile_into_device_as_dev_zero", INTO_SENDFILE, 65536 + 7, 65536 + 7 },
};

int main(int argc, char **argv)
{
	struct stat st;
	const char *ko = getenv("FZ_KO");
	size_t i;

	fz_setup(argc, argv, &dev, &ref);

	for (i = 0; i < FZ_ARRAY_SIZE(cases); i++)
		fz_run(test_xfer, &cases[i], "%s", cases[i].name);
	for (i = 0; i < FZ_ARRAY_SIZE(into_cases); i++)
		fz_run(test_into, &into_cases[i], "%s", into_cases[i].name);
	fz_run(test_splice_full_pipe, NULL, "splice_nonblock_full_pipe_eagain");
	fz_run(test_splice_stream, NULL, "splice_stream_16MiB");
	fz_run(test_splice_allocs, NULL, "splice_64MiB_to_dev_null_page_allocations");
	consumer_tests("");
	fz_run(test_sendfile_tcp, NULL, "sendfile_tcp_zero_page_intact");
	fz_run(test_bound, &bound_self, "splice_past_the_cpu_bound_copies_zeros");
	fz_run(test_bound, &bound_other,
	       "splice_while_another_process_holds_the_cpu_bound_gets_zeros");
	fz_run(test_bound, &bound_other_cpu,
	       "splice_on_another_cpu_still_lends_while_cpu0_is_at_its_bound");
	if (fz_module && !stat(ko && *ko ? ko : "/fastzero.ko", &st))
		huge_buffer_tests();

	return fz_exit();
}
