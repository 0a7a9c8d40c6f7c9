// SPDX-License-Identifier: GPL-2.0
/*
 * t_readv - vectored reads, differential against the reference: segment
 * boundaries, a bad segment in the middle, IOV_MAX segments of varied
 * sizes, and invalid iovec arrays.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fztest.h"

#define NSEG_MAX	(IOV_MAX + 1)
#define REGION_LEN	(2 * FZ_MiB)

static int dev, ref;

enum vec_call { CALL_READV, CALL_PREADV, CALL_PREADV2 };
static const char *const call_names[] = { "readv", "preadv", "preadv2" };

static ssize_t do_vec(enum vec_call call, int fd, const struct iovec *iov,
		      int cnt)
{
	ssize_t ret;

	switch (call) {
	case CALL_READV:
		ret = readv(fd, iov, cnt);
		break;
	case CALL_PREADV:
		ret = preadv(fd, iov, cnt, 0);
		break;
	default:
		ret = preadv2(fd, iov, cnt, -1, 0);
		break;
	}
	return ret < 0 ? -errno : ret;
}

/*
 * A vectored read case.  build() fills iov[] (segments inside region[] are
 * checked; segments elsewhere are the "bad" ones) and returns the count.
 */
struct vec_case {
	const char *name;
	int (*build)(struct iovec *iov, unsigned char *region);
	ssize_t exact;		/* the exact result, or FZ_EXPECT_ANY */
};

static unsigned char *region;		/* REGION_LEN, RW ... */
static unsigned char *bad_none;		/* ... followed by a PROT_NONE page */
static unsigned char *bad_ro;		/* a read-only page */
static struct iovec iovs[NSEG_MAX + 1];

static int in_region(const void *p)
{
	return (const unsigned char *)p >= region &&
	       (const unsigned char *)p < region + REGION_LEN;
}

/*
 * After a read of @ret bytes, memory in the region must be zero exactly in
 * the first @ret bytes of the segment list and untouched elsewhere.
 */
static int verify_region(const struct iovec *iov, int cnt, ssize_t ret,
			 char *why)
{
	static unsigned char expect[REGION_LEN];
	size_t left = ret > 0 ? (size_t)ret : 0, n, off;
	int i;

	memset(expect, FZ_POISON, sizeof(expect));
	for (i = 0; i < cnt && left; i++) {
		n = iov[i].iov_len < left ? iov[i].iov_len : left;
		if (in_region(iov[i].iov_base))
			memset(expect + ((unsigned char *)iov[i].iov_base -
					 region), 0, n);
		left -= n;
	}
	if (!memcmp(region, expect, REGION_LEN))
		return FZ_PASS;
	for (off = 0; region[off] == expect[off]; off++)
		;
	for (i = 0; i < cnt; i++) {
		unsigned char *b = iov[i].iov_base;

		if (in_region(b) && region + off >= b &&
		    region + off < b + iov[i].iov_len)
			return fz_fail(why, "segment %d offset %zu is 0x%02x, expected 0x%02x",
				       i, (size_t)(region + off - b),
				       region[off], expect[off]);
	}
	return fz_fail(why, "byte outside all segments modified (region offset %zu)",
		       off);
}

static int run_vec_case(enum vec_call call, const struct vec_case *c,
			char *why)
{
	ssize_t rr, dr;
	int cnt;

	cnt = c->build(iovs, region);
	rr = do_vec(call, ref, iovs, cnt);
	memset(region, FZ_POISON, REGION_LEN);
	dr = do_vec(call, dev, iovs, cnt);
	if (fz_compare_returns(dr, rr, 0, c->exact, why) != FZ_PASS)
		return FZ_FAIL;
	return verify_region(iovs, cnt, dr, why);
}

/* Five 1000-byte segments 64 bytes apart; @bad replaces segment 2. */
static int build_five(struct iovec *iov, unsigned char *r, void *bad,
		      size_t badlen)
{
	int i;

	for (i = 0; i < 5; i++) {
		iov[i].iov_base = r + FZ_GUARD + i * (1000 + FZ_GUARD);
		iov[i].iov_len = 1000;
	}
	if (badlen) {
		iov[2].iov_base = bad;
		iov[2].iov_len = badlen;
	}
	return 5;
}

static int build_good(struct iovec *iov, unsigned char *r)
{
	return build_five(iov, r, NULL, 0);
}

static int build_bad_null(struct iovec *iov, unsigned char *r)
{
	return build_five(iov, r, NULL, 100);
}

static int build_bad_kernel(struct iovec *iov, unsigned char *r)
{
	return build_five(iov, r, FZ_KERNEL_ADDR, 100);
}

static int build_bad_prot_none(struct iovec *iov, unsigned char *r)
{
	return build_five(iov, r, bad_none, 100);
}

static int build_bad_readonly(struct iovec *iov, unsigned char *r)
{
	return build_five(iov, r, bad_ro, 100);
}

/* Segment 2 ends in the PROT_NONE page: a partial segment. */
static int build_bad_straddle(struct iovec *iov, unsigned char *r)
{
	return build_five(iov, r, bad_none - 300, 1000);
}

/* The first segment is bad: -EFAULT expected from both. */
static int build_bad_first(struct iovec *iov, unsigned char *r)
{
	build_five(iov, r, NULL, 0);
	iov[0].iov_base = bad_none;
	return 5;
}

/* IOV_MAX (or IOV_MAX + 1) segments of varied sizes and alignments. */
static int build_varied(struct iovec *iov, unsigned char *r, int cnt)
{
	size_t off = FZ_GUARD, len;
	int i;

	for (i = 0; i < cnt; i++) {
		if (i % 11 == 0)
			len = 0;
		else if (i == 500)
			len = 70000;
		else if (i == 700)
			len = 4096;
		else
			len = (i * 37) % 777 + 1;
		off += i % 13;		/* vary the alignment */
		iov[i].iov_base = r + off;
		iov[i].iov_len = len;
		off += len + 16;
	}
	return cnt;
}

static int build_iov_max(struct iovec *iov, unsigned char *r)
{
	return build_varied(iov, r, IOV_MAX);
}

static int build_iov_max_plus_1(struct iovec *iov, unsigned char *r)
{
	return build_varied(iov, r, IOV_MAX + 1);
}

static int build_all_empty(struct iovec *iov, unsigned char *r)
{
	int i;

	for (i = 0; i < 8; i++) {
		iov[i].iov_base = i & 1 ? NULL : r + i;
		iov[i].iov_len = 0;
	}
	return 8;
}

/* Eight segments aliasing the same 4 KiB. */
static int build_aliased(struct iovec *iov, unsigned char *r)
{
	int i;

	for (i = 0; i < 8; i++) {
		iov[i].iov_base = r + FZ_GUARD;
		iov[i].iov_len = 4096;
	}
	return 8;
}

static int build_negative_len(struct iovec *iov, unsigned char *r)
{
	build_five(iov, r, NULL, 0);
	iov[3].iov_len = (size_t)SSIZE_MAX + 1;
	return 5;
}

static int build_sum_overflow(struct iovec *iov, unsigned char *r)
{
	build_five(iov, r, NULL, 0);
	iov[1].iov_len = SSIZE_MAX;
	return 5;
}

static int build_zero_count(struct iovec *iov, unsigned char *r)
{
	build_five(iov, r, NULL, 0);
	return 0;
}

static int build_negative_count(struct iovec *iov, unsigned char *r)
{
	build_five(iov, r, NULL, 0);
	return -1;
}

static const struct vec_case vec_cases[] = {
	{ "five_segments", build_good, 5 * 1000 },
	{ "bad_null_segment_in_middle", build_bad_null, 2 * 1000 },
	/* import_iovec() checks access_ok() on every segment first. */
	{ "bad_kernel_segment_in_middle", build_bad_kernel, -EFAULT },
	{ "bad_prot_none_segment_in_middle", build_bad_prot_none, 2 * 1000 },
	{ "bad_readonly_segment_in_middle", build_bad_readonly, 2 * 1000 },
	{ "segment_in_middle_runs_into_prot_none", build_bad_straddle,
	  2 * 1000 + 300 },
	{ "bad_first_segment", build_bad_first, -EFAULT },
	{ "iov_max_varied_sizes", build_iov_max, FZ_EXPECT_ANY },
	{ "iov_max_plus_1_einval", build_iov_max_plus_1, -EINVAL },
	{ "all_segments_empty", build_all_empty, 0 },
	{ "aliased_segments", build_aliased, FZ_EXPECT_ANY },
	{ "negative_segment_len", build_negative_len, -EINVAL },
	{ "segment_len_sum_overflow", build_sum_overflow, FZ_EXPECT_ANY },
	{ "zero_iovcnt", build_zero_count, 0 },
	{ "negative_iovcnt", build_negative_count, -EINVAL },
};

struct vec_arg {
	enum vec_call call;
	const struct vec_case *c;
};

static int test_vec_case(const void *arg, char *why)
{
	const struct vec_arg *v = arg;

	return run_vec_case(v->call, v->c, why);
}

/* Invalid iovec array pointers: nothing to build, the call must fail. */
static int test_bad_iov_ptr(const void *arg, char *why)
{
	const struct iovec *iov = arg;
	char a[FZ_RETLEN], b[FZ_RETLEN];
	ssize_t rr, dr;

	rr = do_vec(CALL_READV, ref, iov, 4);
	dr = do_vec(CALL_READV, dev, iov, 4);
	if (dr != rr)
		return fz_fail(why, "%s returned %s, %s returned %s",
			       fz_dev_name, fz_strret(a, sizeof(a), dr, -dr),
			       fz_ref_name, fz_strret(b, sizeof(b), rr, -rr));
	return FZ_PASS;
}

/*
 * An empty first segment with a signal pending: /dev/zero's iov_iter_zero()
 * steps over empty segments, clears, and only then looks for a signal, so
 * it returns data, never EINTR.  A 20 us interval timer without SA_RESTART
 * keeps a signal pending at random points of each call.
 */
static void on_alarm(int sig)
{
	(void)sig;
}

static long eintr_count(int fd, int use_preadv2, long calls)
{
	static unsigned char buf[4096];
	struct iovec iov[2] = { { buf, 0 }, { buf, sizeof(buf) } };
	long i, eintr = 0;
	ssize_t n;

	for (i = 0; i < calls; i++) {
		n = use_preadv2 ? preadv2(fd, iov, 2, -1, 0) : readv(fd, iov, 2);
		if (n < 0 && errno == EINTR)
			eintr++;
		else if (n != sizeof(buf))
			return -1;
	}
	return eintr;
}

static int test_empty_first_segment_signal(const void *arg, char *why)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { { 0, 20 }, { 0, 20 } }, off = { 0 };
	long calls = fz_quick ? 20000 : 100000, on_dev, on_ref;
	int use_preadv2 = arg != NULL;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	on_ref = eintr_count(ref, use_preadv2, calls);
	on_dev = eintr_count(dev, use_preadv2, calls);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	fz_diag("  EINTR in %ld calls: %s %ld, %s %ld", calls, fz_dev_name,
		on_dev, fz_ref_name, on_ref);
	if (on_dev < 0 || on_ref < 0)
		return fz_fail(why, "a call returned neither 4096 nor EINTR");
	if (on_dev > on_ref)
		return fz_fail(why, "EINTR %ld times in %ld calls, %s %ld times",
			       on_dev, calls, fz_ref_name, on_ref);
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	struct vec_arg va;
	size_t i;
	int call;

	fz_setup(argc, argv, &dev, &ref);

	region = fz_mmap(REGION_LEN + fz_page, PROT_READ | PROT_WRITE);
	bad_none = region + REGION_LEN;
	bad_ro = fz_mmap(fz_page, PROT_READ);
	if (!region || !bad_ro || mprotect(bad_none, fz_page, PROT_NONE)) {
		fz_report(FZ_FAIL, "setup", "mmap failed");
		return fz_exit();
	}

	fz_compact_checks(dev, ref, fz_do_readv3, "readv3");
	for (call = CALL_READV; call <= CALL_PREADV2; call++) {
		for (i = 0; i < FZ_ARRAY_SIZE(vec_cases); i++) {
			va.call = call;
			va.c = &vec_cases[i];
			fz_run(test_vec_case, &va, "%s_%s", call_names[call],
			       vec_cases[i].name);
		}
	}
	fz_run(test_empty_first_segment_signal, NULL,
	       "readv_empty_first_iovec_signal_pending_returns_data");
	fz_run(test_empty_first_segment_signal, "preadv2",
	       "preadv2_empty_first_iovec_signal_pending_returns_data");
	fz_run(test_bad_iov_ptr, NULL, "readv_null_iovec_array");
	fz_run(test_bad_iov_ptr, FZ_KERNEL_ADDR, "readv_kernel_iovec_array");
	fz_run(test_bad_iov_ptr, bad_none, "readv_prot_none_iovec_array");

	return fz_exit();
}
