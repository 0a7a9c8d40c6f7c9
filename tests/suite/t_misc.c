// SPDX-License-Identifier: GPL-2.0
/*
 * t_misc - everything but reading: write(), writev(), lseek(), open modes,
 * stat(), other file syscalls, concurrent readers, and rmmod refused while
 * the device is open.  Differential against the reference where possible.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fztest.h"

static int dev, ref;

static ssize_t neg(ssize_t ret)
{
	return ret < 0 ? -errno : ret;
}

static int same(ssize_t dr, ssize_t rr, char *why)
{
	char a[FZ_RETLEN], b[FZ_RETLEN];

	if (dr == rr)
		return FZ_PASS;
	return fz_fail(why, "%s returned %s, %s returned %s", fz_dev_name,
		       fz_strret(a, sizeof(a), dr, -dr), fz_ref_name,
		       fz_strret(b, sizeof(b), rr, -rr));
}

/* ---- write ---- */

enum src { SRC_VALID, SRC_NULL, SRC_KERNEL, SRC_PROT_NONE, SRC_READONLY };

struct write_case {
	const char *name;
	enum src src;
	size_t len;
	int how;	/* 0 write, 1 pwrite, 2 writev (bad segment in middle) */
};

static unsigned char *src_valid, *src_none, *src_ro;
#define SRC_LEN	(2 * FZ_MiB)

static ssize_t do_write(int fd, const struct write_case *c)
{
	void *bad[] = { src_valid, NULL, FZ_KERNEL_ADDR, src_none, src_ro };
	void *buf = bad[c->src];
	struct iovec iov[3] = {
		{ src_valid, 100 }, { buf, c->len }, { src_valid, 200 },
	};

	switch (c->how) {
	case 0:
		return neg(write(fd, buf, c->len));
	case 1:
		return neg(pwrite(fd, buf, c->len, 12345));
	default:
		return neg(writev(fd, iov, 3));
	}
}

static int test_write(const void *arg, char *why)
{
	const struct write_case *c = arg;
	ssize_t rr, dr;

	memset(src_valid, 0x5A, SRC_LEN);
	rr = do_write(ref, c);
	dr = do_write(dev, c);
	if (same(dr, rr, why))
		return FZ_FAIL;
	if (check_byte(src_valid, SRC_LEN, 0x5A, why))
		return fz_fail(why, "write modified its source buffer");
	return FZ_PASS;
}

static const struct write_case write_cases[] = {
	{ "write_0", SRC_VALID, 0, 0 },
	{ "write_1", SRC_VALID, 1, 0 },
	{ "write_4096", SRC_VALID, 4096, 0 },
	{ "write_2MiB", SRC_VALID, SRC_LEN, 0 },
	{ "write_null_buffer", SRC_NULL, 4096, 0 },
	{ "write_kernel_buffer", SRC_KERNEL, 4096, 0 },
	{ "write_prot_none_buffer", SRC_PROT_NONE, 4096, 0 },
	{ "write_readonly_buffer", SRC_READONLY, 4096, 0 },
	{ "pwrite_4096", SRC_VALID, 4096, 1 },
	{ "pwrite_null_buffer", SRC_NULL, 4096, 1 },
	{ "writev_valid", SRC_VALID, 4096, 2 },
	{ "writev_null_segment", SRC_NULL, 4096, 2 },
	{ "writev_kernel_segment", SRC_KERNEL, 4096, 2 },
	{ "writev_prot_none_segment", SRC_PROT_NONE, 4096, 2 },
};

/* ---- lseek ---- */

struct seek_case {
	off_t off;
	int whence;
};

static int test_lseek(const void *arg, char *why)
{
	static const off_t offs[] = {
		0, 1, -1, 4096, 1LL << 40, (off_t)(~0ULL >> 1), -(1LL << 40),
	};
	static const int whences[] = {
		SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE, 5, -1,
	};
	char sub[FZ_WHYLEN];
	struct fz_agg agg;
	size_t i, j;

	(void)arg;
	fz_agg_init(&agg);
	for (i = 0; i < FZ_ARRAY_SIZE(offs); i++) {
		for (j = 0; j < FZ_ARRAY_SIZE(whences); j++) {
			ssize_t rr = neg(lseek(ref, offs[i], whences[j]));
			ssize_t dr = neg(lseek(dev, offs[i], whences[j]));

			fz_agg_add(&agg, same(dr, rr, sub),
				   "lseek(%lld, %d)", sub,
				   (long long)offs[i], whences[j]);
		}
	}
	/* reading after all that still works */
	fz_agg_add(&agg, fz_check_size(dev, ref, fz_do_read, 4097, 3, sub),
		   "read after lseek", sub);
	return fz_agg_result(&agg, why);
}

/* Reads at absurd offsets must behave like at offset 0. */
static int test_pread_offsets(const void *arg, char *why)
{
	static const off_t offs[] = { 1, 4095, 1LL << 40, (off_t)(~0ULL >> 1) - 4096,
				      -1, -4096 };
	unsigned char buf[4096 + 2 * FZ_GUARD];
	char sub[FZ_WHYLEN];
	struct fz_agg agg;
	ssize_t rr, dr;
	size_t i;

	(void)arg;
	fz_agg_init(&agg);
	for (i = 0; i < FZ_ARRAY_SIZE(offs); i++) {
		rr = neg(pread(ref, buf + FZ_GUARD, 4096, offs[i]));
		fill_guard(buf + FZ_GUARD, 4096, FZ_GUARD);
		dr = neg(pread(dev, buf + FZ_GUARD, 4096, offs[i]));
		if (same(dr, rr, sub) == FZ_PASS && dr > 0 &&
		    !check_zero(buf + FZ_GUARD, dr, sub))
			check_guard(buf + FZ_GUARD, 4096, FZ_GUARD, sub);
		fz_agg_add(&agg, *sub ? FZ_FAIL : FZ_PASS, "offset %lld", sub,
			   (long long)offs[i]);
		*sub = 0;
	}
	return fz_agg_result(&agg, why);
}

/* ---- open modes ---- */

struct open_case {
	const char *name;
	int flags;
};

/* Returns -errno of open, or (read result & 0xffff) | write result << 16. */
static long open_probe(const char *path, int flags)
{
	unsigned char b = 0x5A;
	long r, w;
	int fd = open(path, flags);

	if (fd < 0)
		return -errno;
	r = neg(read(fd, &b, 1));
	w = neg(write(fd, &b, 1));
	close(fd);
	if (r == 1 && b != 0)
		r = 99;		/* read succeeded but did not zero */
	return ((r & 0xffff) | (w & 0xffff) << 16) & 0x7fffffff;
}

static int test_open(const void *arg, char *why)
{
	const struct open_case *c = arg;
	long rr = open_probe(fz_ref_path, c->flags);
	long dr = open_probe(fz_dev_path, c->flags);

	if (dr == rr)
		return FZ_PASS;
	return fz_fail(why, "%s: open/read/write gave 0x%lx, %s: 0x%lx (negative: -errno of open; else read|write<<16)",
		       fz_dev_name, dr, fz_ref_name, rr);
}

static const struct open_case open_cases[] = {
	{ "open_rdonly", O_RDONLY },
	{ "open_wronly", O_WRONLY },
	{ "open_rdwr", O_RDWR },
	{ "open_rdwr_nonblock", O_RDWR | O_NONBLOCK },
	{ "open_rdwr_cloexec", O_RDWR | O_CLOEXEC },
	{ "open_rdwr_append", O_RDWR | O_APPEND },
	{ "open_rdwr_trunc", O_RDWR | O_TRUNC },
	{ "open_rdwr_sync", O_RDWR | O_SYNC },
	{ "open_rdwr_direct", O_RDWR | O_DIRECT },
	{ "open_rdwr_noatime", O_RDWR | O_NOATIME },
	{ "open_directory", O_RDONLY | O_DIRECTORY },
	{ "open_creat_excl", O_RDWR | O_CREAT | O_EXCL },
	{ "open_path", O_PATH },
	{ "open_accmode_3", 3 },
};

/* ---- stat and other syscalls ---- */

static int test_stat(const void *arg, char *why)
{
	struct stat st, fst;

	(void)arg;
	if (stat(fz_dev_path, &st))
		return fz_fail(why, "stat: %s", strerror(errno));
	if (fstat(dev, &fst))
		return fz_fail(why, "fstat: %s", strerror(errno));
	if (!S_ISCHR(st.st_mode))
		return fz_fail(why, "not a character device (mode 0%o)", st.st_mode);
	if ((st.st_mode & 07777) != 0666)
		return fz_fail(why, "permissions 0%o, expected 0666",
			       st.st_mode & 07777);
	if (st.st_rdev != fst.st_rdev || !S_ISCHR(fst.st_mode))
		return fz_fail(why, "fstat differs from stat");
	fz_diag("  %s: device %u:%u", fz_dev_path, major(st.st_rdev),
		minor(st.st_rdev));
	return FZ_PASS;
}

enum misc_op {
	OP_IOCTL_BOGUS, OP_IOCTL_FIONREAD, OP_IOCTL_FIONBIO, OP_FSYNC,
	OP_FDATASYNC, OP_FTRUNCATE, OP_FALLOCATE, OP_POLL, OP_FADVISE,
	OP_SYNC_FILE_RANGE, OP_FLOCK, OP_READAHEAD,
};

struct misc_case {
	const char *name;
	enum misc_op op;
};

static long misc_do(int fd, enum misc_op op)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };
	int v = 0;
	long ret;

	switch (op) {
	case OP_IOCTL_BOGUS:
		return neg(ioctl(fd, 0x12345678, &v));
	case OP_IOCTL_FIONREAD:
		ret = neg(ioctl(fd, FIONREAD, &v));
		return ret ? ret : v;
	case OP_IOCTL_FIONBIO:
		ret = neg(ioctl(fd, FIONBIO, &v));
		return ret;
	case OP_FSYNC:
		return neg(fsync(fd));
	case OP_FDATASYNC:
		return neg(fdatasync(fd));
	case OP_FTRUNCATE:
		return neg(ftruncate(fd, 0));
	case OP_FALLOCATE:
		return neg(fallocate(fd, 0, 0, 4096));
	case OP_POLL:
		ret = neg(poll(&pfd, 1, 0));
		return ret < 0 ? ret : ret << 16 | pfd.revents;
	case OP_FADVISE:
		return -posix_fadvise(fd, 0, 4096, POSIX_FADV_WILLNEED);
	case OP_SYNC_FILE_RANGE:
		return neg(sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE));
	case OP_FLOCK:
		return neg(lockf(fd, F_TEST, 0));
	default:
		return neg(readahead(fd, 0, 4096));
	}
}

static int test_misc(const void *arg, char *why)
{
	const struct misc_case *c = arg;

	return same(misc_do(dev, c->op), misc_do(ref, c->op), why);
}

static const struct misc_case misc_cases[] = {
	{ "ioctl_unknown", OP_IOCTL_BOGUS },
	{ "ioctl_fionread", OP_IOCTL_FIONREAD },
	{ "ioctl_fionbio", OP_IOCTL_FIONBIO },
	{ "fsync", OP_FSYNC },
	{ "fdatasync", OP_FDATASYNC },
	{ "ftruncate", OP_FTRUNCATE },
	{ "fallocate", OP_FALLOCATE },
	{ "poll", OP_POLL },
	{ "fadvise", OP_FADVISE },
	{ "sync_file_range", OP_SYNC_FILE_RANGE },
	{ "lockf_test", OP_FLOCK },
	{ "readahead", OP_READAHEAD },
};

/* ---- concurrent readers ---- */

#define NTHREADS	8
#define READER_SECS	0.5

struct reader {
	pthread_t tid;
	int fd, idx;
	size_t len;
	unsigned long loops;
	char why[FZ_WHYLEN];
	int status;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	size_t maplen = r->len + 2 * FZ_GUARD + 64;
	unsigned char *map = fz_mmap(maplen, PROT_READ | PROT_WRITE);
	unsigned char *buf;
	double end = fz_now() + READER_SECS;
	ssize_t n;

	if (!map) {
		r->status = fz_fail(r->why, "mmap: %s", strerror(errno));
		return NULL;
	}
	buf = map + FZ_GUARD + r->idx * 7;
	do {
		fill_guard(buf, r->len, FZ_GUARD);
		n = r->loops & 1 ? pread(r->fd, buf, r->len, 0) :
				   read(r->fd, buf, r->len);
		r->loops++;
		if (n != (ssize_t)r->len) {
			r->status = fz_fail(r->why, "read of %zu returned %zd (%s)",
					    r->len, n, strerror(errno));
			break;
		}
		r->status = check_zero(buf, r->len, r->why);
		if (!r->status)
			r->status = check_guard(buf, r->len, FZ_GUARD, r->why);
	} while (!r->status && (fz_now() < end || r->loops < 20));
	fz_munmap(map, maplen);
	return NULL;
}

static int test_concurrent(const void *arg, char *why)
{
	int own_fd = *(const int *)arg;
	struct reader r[NTHREADS];
	int i, ret = FZ_PASS;

	memset(r, 0, sizeof(r));
	for (i = 0; i < NTHREADS; i++) {
		r[i].idx = i;
		r[i].len = (size_t)(i * i * 37 % 1024 + 1) * 4096 + i * 13 + 1;
		r[i].fd = own_fd ? open(fz_dev_path, O_RDONLY) : dev;
		if (r[i].fd < 0 ||
		    pthread_create(&r[i].tid, NULL, reader_main, &r[i]))
			return fz_fail(why, "cannot start reader %d", i);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(r[i].tid, NULL);
		if (own_fd)
			close(r[i].fd);
		if (r[i].status && ret == FZ_PASS)
			ret = fz_fail(why, "thread %d (len %zu, %lu reads): %s",
				      i, r[i].len, r[i].loops, r[i].why);
	}
	return ret;
}

/* ---- rmmod while open ---- */

static int test_rmmod_busy(const void *arg, char *why)
{
	long ret;

	(void)arg;
	if (!fz_module)
		return fz_skip(why, "module tests disabled (FZ_MODULE=0)");
	ret = fz_delete_module("fastzero", O_NONBLOCK);
	if (ret == 0)
		return fz_fail(why, "delete_module succeeded with the device open");
	if (errno != EBUSY && errno != EAGAIN)
		return fz_fail(why, "delete_module failed with %s, expected EBUSY or EAGAIN",
			       strerrorname_np(errno));
	/* and the device still works */
	return fz_check_size(dev, ref, fz_do_read, 65537, 5, why);
}

int main(int argc, char **argv)
{
	static const int shared_fd = 0, own_fd = 1;
	size_t i;

	fz_setup(argc, argv, &dev, &ref);
	src_valid = fz_mmap(SRC_LEN, PROT_READ | PROT_WRITE);
	src_none = fz_mmap(4096, PROT_NONE);
	src_ro = fz_mmap(4096, PROT_READ);
	if (!src_valid || !src_none || !src_ro) {
		fz_report(FZ_FAIL, "setup", "mmap failed");
		return fz_exit();
	}

	for (i = 0; i < FZ_ARRAY_SIZE(write_cases); i++)
		fz_run(test_write, &write_cases[i], "%s", write_cases[i].name);
	fz_run(test_lseek, NULL, "lseek_any_offset_any_whence");
	fz_run(test_pread_offsets, NULL, "pread_any_offset");
	for (i = 0; i < FZ_ARRAY_SIZE(open_cases); i++)
		fz_run(test_open, &open_cases[i], "%s", open_cases[i].name);
	fz_run(test_stat, NULL, "stat_chardev_mode_0666");
	for (i = 0; i < FZ_ARRAY_SIZE(misc_cases); i++)
		fz_run(test_misc, &misc_cases[i], "%s", misc_cases[i].name);
	fz_run(test_concurrent, &shared_fd, "concurrent_readers_shared_fd");
	fz_run(test_concurrent, &own_fd, "concurrent_readers_own_fd");
	fz_run(test_rmmod_busy, NULL, "rmmod_refused_while_open");

	return fz_exit();
}
