// SPDX-License-Identifier: GPL-2.0
/*
 * t_async - non-blocking and asynchronous reads, differential against the
 * reference: preadv2(RWF_NOWAIT), io_uring (READ, READV, READ_FIXED,
 * batches) and Linux aio (PREAD, PREADV).
 */
#include <errno.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fztest.h"

static int dev, ref;

/* ---- preadv2 ---- */

static int test_nowait_succeeds(const void *arg, char *why)
{
	static const size_t sizes[] = { 1, 4096, FZ_MiB, 16 * FZ_MiB + 5 };
	char a[FZ_RETLEN];
	unsigned char *buf;
	ssize_t ret;
	size_t i;
	int fd;

	(void)arg;
	buf = fz_mmap(sizes[3], PROT_READ | PROT_WRITE);
	if (!buf)
		return fz_fail(why, "mmap: %s", strerror(errno));
	memset(buf, FZ_POISON, sizes[3]);	/* fault it in */
	for (i = 0; i < 2 * FZ_ARRAY_SIZE(sizes); i++) {
		fd = i & 1 ? dev : ref;
		ret = fz_do_preadv2_nowait(fd, buf, sizes[i / 2]);
		/* Beyond a page the kernel may stop early if need_resched(). */
		if (ret <= 0 || ret > (ssize_t)sizes[i / 2] ||
		    (sizes[i / 2] <= 4096 && ret != (ssize_t)sizes[i / 2]))
			break;
		if (ret != (ssize_t)sizes[i / 2])
			fz_diag("  %s: short RWF_NOWAIT read %zd of %zu",
				fd == dev ? fz_dev_name : fz_ref_name, ret,
				sizes[i / 2]);
	}
	fz_munmap(buf, sizes[3]);
	if (i == 2 * FZ_ARRAY_SIZE(sizes))
		return FZ_PASS;
	return fz_fail(why, "%s: RWF_NOWAIT read of %zu returned %s",
		       fd == dev ? fz_dev_name : fz_ref_name, sizes[i / 2],
		       fz_strret(a, sizeof(a), ret, -ret));
}

/* Unusual preadv2() flags must be treated like the reference does. */
static int test_preadv2_flags(const void *arg, char *why)
{
	int flags = *(const int *)arg;
	char a[FZ_RETLEN], b[FZ_RETLEN];
	unsigned char buf[4096 + 2 * FZ_GUARD];
	struct iovec iov = { buf + FZ_GUARD, 4096 };
	ssize_t rr, dr;

	rr = preadv2(ref, &iov, 1, -1, flags);
	rr = rr < 0 ? -errno : rr;
	fill_guard(buf + FZ_GUARD, 4096, FZ_GUARD);
	dr = preadv2(dev, &iov, 1, -1, flags);
	dr = dr < 0 ? -errno : dr;
	if (dr != rr)
		return fz_fail(why, "%s returned %s, %s returned %s",
			       fz_dev_name, fz_strret(a, sizeof(a), dr, -dr),
			       fz_ref_name, fz_strret(b, sizeof(b), rr, -rr));
	if (dr > 0 && check_zero(buf + FZ_GUARD, dr, why))
		return FZ_FAIL;
	return check_guard(buf + FZ_GUARD, 4096, FZ_GUARD, why);
}

/* ---- io_uring ---- */

static struct io_uring ring;
/* FZ_PASS; FZ_SKIP where the kernel has no io_uring; FZ_FAIL otherwise. */
static int ring_status;
static char ring_why[FZ_WHYLEN];

static void ring_init(void)
{
	int ret = io_uring_queue_init(64, &ring, 0);

	if (ret == 0)
		ring_status = FZ_PASS;
	else if (ret == -ENOSYS)
		ring_status = fz_skip(ring_why, "io_uring not built in (ENOSYS)");
	else if (ret == -EPERM)
		ring_status = fz_skip(ring_why,
				      "io_uring disabled (EPERM, kernel.io_uring_disabled)");
	else
		ring_status = fz_fail(ring_why, "io_uring_setup: %s",
				      strerror(-ret));
}

static ssize_t ring_wait(void)
{
	struct io_uring_cqe *cqe;
	ssize_t res;
	int ret;

	ret = io_uring_submit_and_wait(&ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(&ring, &cqe);
	if (ret < 0)
		return ret;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

static ssize_t uring_read(int fd, void *buf, size_t len)
{
	io_uring_prep_read(io_uring_get_sqe(&ring), fd, buf, len, 0);
	return ring_wait();
}

static ssize_t uring_readv(int fd, void *buf, size_t len)
{
	struct iovec iov[2] = {
		{ buf, len / 2 },
		{ (unsigned char *)buf + len / 2, len - len / 2 },
	};

	io_uring_prep_readv(io_uring_get_sqe(&ring), fd, iov, 2, 0);
	return ring_wait();
}

static int test_uring_fixed(const void *arg, char *why)
{
	size_t len = FZ_MiB + 5, maplen = len + 2 * FZ_GUARD;
	unsigned char *map, *buf;
	struct iovec reg;
	ssize_t rr, dr;
	int ret;

	(void)arg;
	map = fz_mmap(maplen, PROT_READ | PROT_WRITE);
	if (!map)
		return fz_fail(why, "mmap: %s", strerror(errno));
	reg.iov_base = map;
	reg.iov_len = maplen;
	ret = io_uring_register_buffers(&ring, &reg, 1);
	if (ret) {
		fz_munmap(map, maplen);
		return fz_fail(why, "io_uring_register_buffers: %s",
			       strerror(-ret));
	}
	buf = map + FZ_GUARD;
	io_uring_prep_read_fixed(io_uring_get_sqe(&ring), ref, buf, len, 0, 0);
	rr = ring_wait();
	fill_guard(buf, len, FZ_GUARD);
	io_uring_prep_read_fixed(io_uring_get_sqe(&ring), dev, buf, len, 0, 0);
	dr = ring_wait();
	/*
	 * io_uring tries a read with IOCB_NOWAIT first, and /dev/zero's
	 * read_iter_zero() then ends after 4 KiB whenever need_resched() is
	 * set: a legal short count (fz_allow_short), seen on 6.1 under TCG.
	 */
	ret = fz_compare_returns(dr, rr, len, len, why);
	if (ret == FZ_PASS && dr > 0 && check_zero(buf, dr, why))
		ret = FZ_FAIL;
	if (ret == FZ_PASS)
		ret = check_guard(buf, len, FZ_GUARD, why);
	io_uring_unregister_buffers(&ring);
	fz_munmap(map, maplen);
	return ret;
}

/*
 * 64 reads of different sizes in flight at once, each checked.  Each may
 * be short (see fz_allow_short) but must not be empty.
 */
#define BATCH	64

static size_t batch_len(int i)
{
	return (size_t)i * 4099 + (i % 7) + 1;
}

static int check_batch(unsigned char *map, size_t slot, const int *res,
		       char *why)
{
	char sub[FZ_WHYLEN];
	unsigned char *buf;
	size_t n;
	int i;

	for (i = 0; i < BATCH; i++) {
		buf = map + i * slot + FZ_GUARD + (i % 64);
		if (res[i] <= 0 || (size_t)res[i] > batch_len(i))
			return fz_fail(why, "read %d of %zu returned %d", i,
				       batch_len(i), res[i]);
		n = res[i];
		if (check_zero(buf, n, sub) ||
		    check_untouched(buf - FZ_GUARD, FZ_GUARD, sub) ||
		    check_untouched(buf + n, batch_len(i) - n + FZ_GUARD, sub))
			return fz_fail(why, "read %d: %s", i, sub);
	}
	return FZ_PASS;
}

static int test_uring_batch(const void *arg, char *why)
{
	size_t slot = BATCH * 4099 + 2 * FZ_GUARD + 128, maplen = BATCH * slot;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned char *map;
	int i, ret, res[BATCH];

	(void)arg;
	map = fz_mmap(maplen, PROT_READ | PROT_WRITE);
	if (!map)
		return fz_fail(why, "mmap: %s", strerror(errno));
	memset(map, FZ_POISON, maplen);
	for (i = 0; i < BATCH; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, dev, map + i * slot + FZ_GUARD + (i % 64),
				   batch_len(i), 0);
		io_uring_sqe_set_data64(sqe, i);
		res[i] = 0;
	}
	ret = io_uring_submit(&ring);
	for (i = 0; i < ret; i++) {
		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		res[io_uring_cqe_get_data64(cqe) % BATCH] = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	if (ret != BATCH)
		ret = fz_fail(why, "io_uring_submit returned %d for %d SQEs",
			      ret, BATCH);
	else
		ret = check_batch(map, slot, res, why);
	fz_munmap(map, maplen);
	return ret;
}

/* ---- Linux aio ---- */

static aio_context_t aio_ctx;
/* FZ_PASS; FZ_SKIP where the kernel has no aio (ENOSYS); FZ_FAIL otherwise. */
static int aio_status;
static char aio_why[FZ_WHYLEN];

static void aio_init(void)
{
	if (syscall(__NR_io_setup, 8, &aio_ctx) == 0)
		aio_status = FZ_PASS;
	else if (errno == ENOSYS)
		aio_status = fz_skip(aio_why, "io_setup: ENOSYS (CONFIG_AIO=n)");
	else
		aio_status = fz_fail(aio_why, "io_setup: %s", strerror(errno));
}

static ssize_t aio_rw(int fd, unsigned int op, void *buf, size_t len)
{
	struct iocb cb = {
		.aio_lio_opcode = op,
		.aio_fildes = fd,
		.aio_buf = (unsigned long)buf,
		.aio_nbytes = len,
	};
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;
	long ret;

	ret = syscall(__NR_io_submit, aio_ctx, 1, cbs);
	if (ret != 1)
		return ret < 0 ? -errno : -EIO;
	ret = syscall(__NR_io_getevents, aio_ctx, 1, 1, &ev, NULL);
	if (ret != 1)
		return ret < 0 ? -errno : -EIO;
	return ev.res;
}

static ssize_t aio_pread(int fd, void *buf, size_t len)
{
	return aio_rw(fd, IOCB_CMD_PREAD, buf, len);
}

static ssize_t aio_preadv(int fd, void *buf, size_t len)
{
	struct iovec iov[2] = {
		{ buf, len / 3 },
		{ (unsigned char *)buf + len / 3, len - len / 3 },
	};

	return aio_rw(fd, IOCB_CMD_PREADV, iov, 2);
}

/* ---- main ---- */

/* The three fz_compact_checks() tests of @prefix, each reported @status. */
static void report_compact(const char *prefix, int status, const char *why)
{
	static const char *const suffix[] = {
		"sizes_0_300", "big_sizes", "prot_none_offsets",
	};
	char name[128];
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(suffix); i++) {
		snprintf(name, sizeof(name), "%s_%s", prefix, suffix[i]);
		fz_report(status, name, why);
	}
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int flags; } pflags[] = {
		{ "preadv2_flags_0", 0 },
		{ "preadv2_flags_nowait", RWF_NOWAIT },
		{ "preadv2_flags_hipri", RWF_HIPRI },
		{ "preadv2_flags_dsync", RWF_DSYNC },
		{ "preadv2_flags_append", RWF_APPEND },
		{ "preadv2_flags_invalid", 0x40000000 },
	};
	size_t i;

	fz_setup(argc, argv, &dev, &ref);

	fz_run(test_nowait_succeeds, NULL, "preadv2_nowait_succeeds");
	for (i = 0; i < FZ_ARRAY_SIZE(pflags); i++)
		fz_run(test_preadv2_flags, &pflags[i].flags, "%s",
		       pflags[i].name);
	fz_allow_short = 1;
	fz_compact_checks(dev, ref, fz_do_preadv2_nowait, "preadv2_nowait");

	ring_init();
	if (ring_status == FZ_PASS) {
		fz_compact_checks(dev, ref, uring_read, "io_uring_read");
		fz_compact_checks(dev, ref, uring_readv, "io_uring_readv");
		fz_run(test_uring_fixed, NULL, "io_uring_read_fixed");
		fz_run(test_uring_batch, NULL, "io_uring_batch_%d_reads", BATCH);
		io_uring_queue_exit(&ring);
	} else {
		report_compact("io_uring_read", ring_status, ring_why);
		report_compact("io_uring_readv", ring_status, ring_why);
		fz_report(ring_status, "io_uring_read_fixed", ring_why);
		fz_report(ring_status, "io_uring_batch_64_reads", ring_why);
	}

	aio_init();
	if (aio_status == FZ_PASS) {
		fz_compact_checks(dev, ref, aio_pread, "aio_pread");
		fz_compact_checks(dev, ref, aio_preadv, "aio_preadv");
		syscall(__NR_io_destroy, aio_ctx);
	} else {
		report_compact("aio_pread", aio_status, aio_why);
		report_compact("aio_preadv", aio_status, aio_why);
	}
	fz_allow_short = 0;

	return fz_exit();
}
