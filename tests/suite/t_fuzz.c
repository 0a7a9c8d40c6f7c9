// SPDX-License-Identifier: GPL-2.0
/*
 * t_fuzz - a seeded differential fuzzer: random sequences of operations on
 * the device and the reference side by side, comparing every return value,
 * errno, signal and byte.  The operations are in ops[]: reads and writes of
 * every kind and size into plain, misaligned, guarded, unmapped, read-only
 * or mapped memory; splice, tee, sendfile; mmap, munmap, mremap, mprotect,
 * madvise and mlock on pairs of mappings (one of each device, which must
 * hold the same bytes and fault alike at all times), stores, fork, threads.
 * With FZ_MODULE=1 a thread changes chunk_size, force_variant and
 * nt_threshold all along (restored at exit).  Accepted differences of the
 * reference, and no others: 6.1's /dev/zero has no splice_read (EINVAL;
 * the device's result is then checked alone), clear_user() before 6.4 may
 * stop up to 7 bytes short of a fault, RWF_NOWAIT reads may stop early.
 *
 * FZ_FUZZ_SEED (or argv[1]): the seed, default from the clock; FZ_FUZZ_OPS:
 * operations (2000, 500 with FZ_QUICK=1); FZ_FUZZ_SECONDS: time cap (60);
 * FZ_FUZZ_WATCHDOG: seconds an operation may take (60); FZ_FUZZ_VERBOSE=1:
 * print each operation.  FZ_QUICK=1 also caps sizes at 16 MiB (64 MiB
 * otherwise) without changing the sequence.  One TAP test per BATCH
 * operations.  A failure ends the run naming the seed, the operation's
 * index and parameters; FZ_FUZZ_SEED=<seed> FZ_FUZZ_OPS=<index + 1>
 * replays the run up to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fzarch.h"
#include "fztest.h"

#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define REF		0	/* side indexes: the reference and ... */
#define DEV		1	/* ... the device under test */
#define HPAGE		(2 * FZ_MiB)
#define SCRATCH_LEN	(64 * FZ_MiB + 16384)
#define AREA_LEN	FZ_MiB	/* read-only and unmapped destinations */
#define MAX_PAIRS	8
#define MAP_BUDGET	(256 * FZ_MiB)
#define TOUCH_BUDGET	(128 * FZ_MiB)
#define MAX_SEG		8
#define NWORKERS	4
#define BATCH		250
#define ANY		FZ_EXPECT_ANY
#define RC_MPROTECT	(-1)	/* op_range() calls other than madvise() */
#define RC_MLOCK	(-2)
#define RC_MUNLOCK	(-3)
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))
#define PICK(a)		((a)[rnd(FZ_ARRAY_SIZE(a))])

static __thread uint64_t rng;	/* splitmix64, a stream per thread */

static uint64_t rnd64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rnd(size_t n)
{
	return n ? rnd64() % n : 0;
}

static int chance(size_t n)
{
	return rnd(n) == 0;
}

/* A length up to @max, biased towards small and page-boundary sizes. */
static size_t rand_size(size_t max)
{
	static const size_t span[] = {
		16, 4096, 4096, 65536, FZ_MiB, 8 * FZ_MiB, 16 * FZ_MiB,
	};
	size_t k = rnd(FZ_ARRAY_SIZE(span) + 3), n;

	if (k == FZ_ARRAY_SIZE(span))
		n = (1 + rnd(256)) * fz_page + rnd(3) - 1;
	else if (k > FZ_ARRAY_SIZE(span))
		n = (1 + rnd(4)) * HPAGE + (rnd(3) - 1) * (chance(2) ? 1 : fz_page);
	else
		n = rnd((k == 6 && chance(3) && !fz_quick ? 4 : 1) * span[k] + 1);
	return MIN(n, max);
}

/* For memory nothing is stored to: also lengths nobody could map. */
static size_t wild_size(void)
{
	static const size_t huge[] = {
		1UL << 31, 1UL << 32, 1UL << 40, SSIZE_MAX, SIZE_MAX,
	};

	return chance(4) ? PICK(huge) : rand_size(64 * FZ_MiB);
}

static off_t rand_off(void)
{
	uint64_t r = rnd64();
	const off_t v[] = {
		0, 0, (off_t)(r >> 44) * 4096, (off_t)(r >> 24),
		LLONG_MAX - (off_t)(r >> 48), -1 - (off_t)(r >> 52),
	};

	return v[r % FZ_ARRAY_SIZE(v)];
}

/* Two mappings, one of each device, always operated on alike. */
struct pair {
	unsigned char *p[2];	/* [REF], [DEV] */
	size_t len;		/* a page multiple */
	size_t touched;		/* bytes accessed: an upper bound */
	int shared;
};

static struct pair pairs[MAX_PAIRS];
static int npairs;

static unsigned long long seed;
static unsigned long op_index, reported, mremap_skipped;
static int driver_mode;	/* the module runs shared_clear=driver */
static const char *op_name = "setup";
static char desc[400], batch_name[64];
static int verbose, ref_no_splice, memlock_unlimited, watchdog;
static int fds[2][3];		/* [side][O_RDWR, O_RDONLY, O_WRONLY] */
static const char *const fd_names[] = { "O_RDWR", "O_RDONLY", "O_WRONLY" };
static int pipes[2][2], tpipes[2][2], memfds[2], null_fd;
static unsigned char *scratch, *hole, *ro_area;
static pid_t child_pid;
static unsigned char iobuf[65536];	/* the main thread's (or a child's) */

static void describe(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void describe(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	if (verbose)
		fz_diag("op %lu %s: %s", op_index, op_name, desc);
}

static const char *tag(const struct pair *m)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "pair %d (%s, %zu bytes)", (int)(m - pairs),
		 m->shared ? "shared" : "private", m->len);
	return buf;
}

static int same_ret(const char *what, long rr, long dr, char *why)
{
	char a[FZ_RETLEN], b[FZ_RETLEN];

	if (rr == dr)
		return FZ_PASS;
	return fz_fail(why, "%s: %s gives %s, %s gives %s", what, fz_dev_name,
		       fz_strret(a, sizeof(a), dr < 0 ? -1 : dr, -dr),
		       fz_ref_name, fz_strret(b, sizeof(b), rr < 0 ? -1 : rr, -rr));
}

/* ---- memory access where faults are expected ---- */

static __thread sigjmp_buf fault_env;
static __thread volatile int fault_armed;

static void say(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		_exit(2);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char msg[600];

	(void)uc;
	if (fault_armed)
		siglongjmp(fault_env, sig);
	snprintf(msg, sizeof(msg), "# unexpected signal %d at %p: seed %llu op %lu %s: %s\n",
		 sig, si->si_addr, seed, op_index, op_name, desc);
	say(msg);
	signal(sig, SIG_DFL);	/* and die on return */
}

/* Store @src to, or load from, [p, p + n) within a page: 0 or the signal. */
static int access_chunk(unsigned char *p, size_t n, const unsigned char *src)
{
	int sig;

	fault_armed = 1;
	sig = sigsetjmp(fault_env, 0);
	if (!sig) {
		if (src)
			memcpy(p, src, n);
		else
			(void)*(volatile unsigned char *)p;
	}
	fault_armed = 0;
	return sig;
}

static const char *signame(int sig)
{
	return sig ? sigabbrev_np(sig) : "no signal";
}

/*
 * [off, off + n) of both sides of @m, page by page: with @ws, store a
 * pattern made from it, else load and compare (after MADV_FREE, @lazy: a
 * page may also be zero on one side only).  Accesses must fault alike.
 */
static int access_range(const struct pair *m, size_t off, size_t n,
			unsigned int ws, int lazy, char *why)
{
	const unsigned char *a = m->p[REF], *b = m->p[DEV];
	size_t end = off + n, next, i, len;
	int sig[2], s;

	for (; off < end; off = next) {
		next = MIN(end, (off / fz_page + 1) * fz_page);
		len = next - off;
		for (i = 0; ws && i < len; i++)
			iobuf[i] = (unsigned char)(ws ^ (((off + i) >> 12) * 0x9d) ^
						   ((off + i) * 0x3b)) | 1;
		for (s = 0; s < 2; s++)
			sig[s] = access_chunk(m->p[s] + off, len, ws ? iobuf : NULL);
		if (sig[REF] != sig[DEV])
			return fz_fail(why, "%s offset %zu of the mapping: %s gives %s, %s gives %s",
				       ws ? "storing to" : "loading", off,
				       fz_dev_name, signame(sig[DEV]),
				       fz_ref_name, signame(sig[REF]));
		if (ws || sig[REF] || !memcmp(a + off, b + off, len))
			continue;
		if (lazy && (fz_first_not(a + off, len, 0) == len ||
			     fz_first_not(b + off, len, 0) == len))
			continue;
		for (i = off; a[i] == b[i]; i++)
			;
		return fz_fail(why, "offset %zu of the mapping: %s has 0x%02x, %s has 0x%02x",
			       i, fz_dev_name, b[i], fz_ref_name, a[i]);
	}
	return FZ_PASS;
}

/* ---- the pairs and their budget ---- */

static size_t sum_pairs(int touched)
{
	size_t t = 0;
	int i;

	for (i = 0; i < npairs; i++)
		t += touched ? pairs[i].touched : pairs[i].len;
	return t;
}

static size_t touch_left(void)
{
	return TOUCH_BUDGET - MIN(sum_pairs(1), TOUCH_BUDGET);
}

/* Load and compare what the budget leaves (a page at least) of a range. */
static int verify(struct pair *m, size_t off, size_t n, int lazy, char *why)
{
	if (off >= m->len)
		return FZ_PASS;
	n = MIN(MIN(n, m->len - off), MAX(touch_left(), fz_page));
	m->touched = MIN(m->len, m->touched + n);
	return access_range(m, off, n, 0, lazy, why);
}

static struct pair *pick_pair(void)
{
	return &pairs[rnd(npairs)];
}

static void pick_range(const struct pair *m, int aligned, size_t *off,
		       size_t *n)
{
	*off = chance(4) ? 0 : rnd(m->len / fz_page) * fz_page;
	if (!aligned && chance(2))
		*off += rnd(fz_page);
	*n = rand_size(m->len - *off);
	*n = MIN(*n, touch_left());
}

static int unmap_pair(struct pair *m, char *why)
{
	long r[2];
	int s;

	for (s = 0; s < 2; s++)
		r[s] = munmap(m->p[s], m->len) ? -errno : 0;
	*m = pairs[--npairs];
	return same_ret("munmap", r[REF], r[DEV], why);
}

/* ---- read and write calls ---- */

enum call { C_PLAIN, C_POS, C_VEC, C_VEC_POS, C_VEC2 };

struct method {
	const char *name;
	enum call call;
	int write, flags;
};

enum {
	M_READ, M_PREAD, M_READV, M_PREADV, M_PREADV2, M_NOWAIT, M_HIPRI,
	M_NREAD, M_WRITE = M_NREAD, M_PWRITE, M_WRITEV, M_PWRITEV2,
};

static const struct method methods[] = {
	[M_READ] = { "read", C_PLAIN, 0, 0 },
	[M_PREAD] = { "pread", C_POS, 0, 0 },
	[M_READV] = { "readv", C_VEC, 0, 0 },
	[M_PREADV] = { "preadv", C_VEC_POS, 0, 0 },
	[M_PREADV2] = { "preadv2", C_VEC2, 0, 0 },
	[M_NOWAIT] = { "preadv2(RWF_NOWAIT)", C_VEC2, 0, RWF_NOWAIT },
	[M_HIPRI] = { "preadv2(RWF_HIPRI)", C_VEC2, 0, RWF_HIPRI },
	[M_WRITE] = { "write", C_PLAIN, 1, 0 },
	[M_PWRITE] = { "pwrite", C_POS, 1, 0 },
	[M_WRITEV] = { "writev", C_VEC, 1, 0 },
	[M_PWRITEV2] = { "pwritev2(RWF_NOWAIT)", C_VEC2, 1, RWF_NOWAIT },
};

/* The current call's parameters (m_io() has fz_read_fn's signature). */
static __thread struct {
	const struct method *m;
	int nseg;
	unsigned int cut[MAX_SEG];	/* segment ends, in 1/65536 of the length */
	off_t off;
} rp;

/* @sane: an offset that lets the call succeed. */
static void rand_params(const struct method *m, int sane)
{
	unsigned int c;
	int i, j;

	rp.m = m;
	rp.nseg = m->call >= C_VEC ? 1 + rnd(MAX_SEG) : 1;
	for (i = 0; i < rp.nseg - 1; i++) {
		c = rnd(65537);
		for (j = i; j > 0 && rp.cut[j - 1] > c; j--)
			rp.cut[j] = rp.cut[j - 1];
		rp.cut[j] = c;
	}
	rp.off = sane ? 0 : rand_off();
	if (m->call == C_VEC2 && (sane || chance(2)))
		rp.off = -1;
}

static int off_ok(size_t len)
{
	if (rp.m->call == C_PLAIN || rp.m->call == C_VEC ||
	    (rp.m->call == C_VEC2 && rp.off == -1))
		return 1;
	return rp.off >= 0 && len <= (size_t)(LLONG_MAX - rp.off);
}

static ssize_t m_io(int fd, void *buf, size_t len)
{
	struct iovec iov[MAX_SEG];
	int i, w = rp.m->write, n = rp.nseg;
	size_t prev = 0, end;
	ssize_t r;

	for (i = 0; i < n; i++, prev = end) {
		end = i == n - 1 ? len : len / 65536 * rp.cut[i] +
					 len % 65536 * rp.cut[i] / 65536;
		iov[i].iov_base = (unsigned char *)buf + prev;
		iov[i].iov_len = end - prev;
	}
	switch (rp.m->call) {
	case C_PLAIN:
		r = w ? write(fd, buf, len) : read(fd, buf, len);
		break;
	case C_POS:
		r = w ? pwrite(fd, buf, len, rp.off) : pread(fd, buf, len, rp.off);
		break;
	case C_VEC:
		r = w ? writev(fd, iov, n) : readv(fd, iov, n);
		break;
	case C_VEC_POS:
		r = w ? pwritev(fd, iov, n, rp.off) : preadv(fd, iov, n, rp.off);
		break;
	default:
		r = w ? pwritev2(fd, iov, n, rp.off, rp.m->flags) :
			preadv2(fd, iov, n, rp.off, rp.m->flags);
		break;
	}
	return r < 0 ? -errno : r;
}

static void pair_rw(const struct pair *m, size_t off, size_t n, int fk,
		    ssize_t *r)
{
	int s;

	for (s = 0; s < 2; s++)
		r[s] = m_io(fds[s][fk], m->p[s] + off, n);
}

/*
 * The results of pair_rw() with @mt; after an accepted short count (6.1's
 * qword clear_user(), RWF_NOWAIT) the side that stopped first is cleared as
 * far as the other one, then the bytes are compared.
 */
static int pair_settle(struct pair *m, size_t off, size_t n, const ssize_t *r,
		       const struct method *mt, char *why)
{
	size_t c[2];
	int s, ret;

	fz_allow_short = !!(mt->flags & RWF_NOWAIT);
	ret = fz_compare_returns(r[DEV], r[REF], n, ANY, why);
	fz_allow_short = 0;
	if (ret)
		return FZ_FAIL;
	for (s = 0; s < 2; s++)
		c[s] = r[s] > 0 && !mt->write ? (size_t)r[s] : 0;
	s = c[REF] < c[DEV] ? REF : DEV;
	memset(m->p[s] + off + c[s], 0, c[!s] - c[s]);
	return verify(m, off, n, 0, why);
}

enum dest { D_PLAIN, D_GUARD, D_UNMAPPED, D_RO, D_KERNEL, D_PAIR };

static const char *const hole_names[] = { "PROT_NONE", "read-only", "unmapped" };

/* The page after the scratch area: PROT_NONE, read-only or unmapped. */
static void set_hole(int kind)
{
	if (kind == 2)
		munmap(hole, fz_page);
	else
		mmap(hole, fz_page, kind ? PROT_READ : PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static enum dest pick_dest(void)
{
	static const unsigned char w[] = { 30, 30, 8, 8, 4, 20 };
	size_t i, r = rnd(100);

	for (i = 0; r >= w[i]; i++)
		r -= w[i];
	return i == D_PAIR && !npairs ? D_PLAIN : (enum dest)i;
}

static int op_io(long arg, char *why)
{
	const struct method *m = &methods[arg];
	int fk = chance(8) ? 1 + rnd(2) : 0, hk = rnd(3), ret, i, n = 0;
	char detail[96], sub[FZ_WHYLEN], cuts[64] = " -";
	unsigned char *buf, *lo = NULL, *hi = NULL;
	size_t len, k, off = 0;
	enum dest d = pick_dest();
	ssize_t expect = ANY, r[2];
	struct pair *pm = NULL;

	rand_params(m, 0);
	if (d == D_PLAIN) {
		k = chance(2) ? rnd(64) : rnd(fz_page);
		len = rand_size(SCRATCH_LEN - 2 * FZ_GUARD - fz_page);
		buf = scratch + FZ_GUARD + k;
		lo = buf - FZ_GUARD;
		hi = buf + len + FZ_GUARD;
		expect = len;
		snprintf(detail, sizeof(detail), "plain memory, misaligned by %zu", k);
	} else if (d == D_GUARD) {
		k = rand_size(SCRATCH_LEN - FZ_GUARD);
		len = k + 1 + (chance(3) ? rnd(8) : rand_size(64 * FZ_MiB));
		buf = hole - k;
		lo = buf - FZ_GUARD;
		hi = hole;
		expect = k ? (ssize_t)k : -EFAULT;
		snprintf(detail, sizeof(detail), "the %zu bytes before a %s page",
			 k, hole_names[hk]);
	} else if (d == D_PAIR) {
		pm = pick_pair();
		pick_range(pm, 0, &off, &len);
		buf = pm->p[REF] + off;
		snprintf(detail, sizeof(detail), "%s at %zu", tag(pm), off);
	} else {
		buf = d == D_RO ? ro_area : d == D_KERNEL ? FZ_KERNEL_ADDR :
		      mmap(NULL, AREA_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (d == D_UNMAPPED)
			munmap(buf, AREA_LEN);
		buf += rnd(AREA_LEN);
		len = wild_size();
		snprintf(detail, sizeof(detail), "%s memory", d == D_RO ? "read-only" :
			 d == D_KERNEL ? "kernel" : "unmapped");
	}
	if (m->write || fk == 2 || !off_ok(len))
		expect = ANY;
	for (i = 0; i < rp.nseg - 1; i++)
		n += snprintf(cuts + n, sizeof(cuts) - n, " %u", rp.cut[i]);
	describe("fd %s, %s, len %zu, offset %lld, %d segment(s) cut at%s /65536",
		 fd_names[fk], detail, len, (long long)rp.off, rp.nseg, cuts);
	if (pm) {
		pair_rw(pm, off, len, fk, r);
		return pair_settle(pm, off, len, r, m, why);
	}
	fz_allow_short = !!(m->flags & RWF_NOWAIT);
	if (d == D_GUARD)
		set_hole(hk);
	if (m->write && lo)
		memset(lo, FZ_POISON, hi - lo);
	ret = fz_diff_read(fds[DEV][fk], fds[REF][fk], m_io, buf, len,
			   m->write ? NULL : lo, m->write ? NULL : hi, expect, why);
	if (!ret && m->write && lo && check_untouched(lo, hi - lo, sub))
		ret = fz_fail(why, "the source buffer was modified: %s", sub);
	if (d == D_GUARD)
		set_hole(0);
	fz_allow_short = 0;
	return ret;
}

/* ---- splice, tee, sendfile ---- */

enum { X_RET, X_OFF, X_TEE, X_TEE_BYTES, X_BYTES, X_N };

static const char *const xfer_what[X_N] = {
	"result", "offset advance", "tee result",
	"bytes back from the tee pipe (-1: not zero)",
	"bytes read back (-1: not zero)",
};

/* Empty a pipe, or read a file from 0: the byte count, -1 if not all zero. */
static long drain(int fd, int is_file)
{
	long total = 0, bad = 0;
	ssize_t r;

	while ((r = is_file ? pread(fd, iobuf, sizeof(iobuf), total) :
			      read(fd, iobuf, sizeof(iobuf))) > 0) {
		bad |= fz_first_not(iobuf, r, 0) != (size_t)r;
		total += r;
	}
	return bad ? -1 : total;
}

static int cmp_xfer(long v[2][X_N], long expect, char *why)
{
	long *d = v[DEV], dr = d[X_RET];
	char a[FZ_RETLEN];
	int k;

	if (ref_no_splice && v[REF][X_RET] == -EINVAL && d[X_RET] != -EINVAL) {
		/* 6.1's /dev/zero has no splice_read: the device alone. */
		if (expect != ANY && dr != expect)
			return fz_fail(why, "%s returned %s, expected %ld (%s: EINVAL, no splice_read)",
				       fz_dev_name, fz_strret(a, sizeof(a), dr < 0 ? -1 : dr, -dr),
				       expect, fz_ref_name);
		if (d[X_RET] >= 0 && (d[X_BYTES] != d[X_RET] ||
				      d[X_TEE_BYTES] != MAX(d[X_TEE], 0)))
			return fz_fail(why, "%s returned %ld (tee %ld), but %ld (tee %ld) zero bytes came out",
				       fz_dev_name, d[X_RET], d[X_TEE],
				       d[X_BYTES], d[X_TEE_BYTES]);
		return FZ_PASS;
	}
	for (k = 0; k < X_N; k++)
		if (v[REF][k] != d[k])
			return fz_fail(why, "%s: %s gives %ld, %s gives %ld",
				       xfer_what[k], fz_dev_name, d[k],
				       fz_ref_name, v[REF][k]);
	return FZ_PASS;
}

/* @kind 0: splice into a pipe, 1: and tee, 2: sendfile to a memfd, 3: to /dev/null. */
static int op_xfer(long kind, char *why)
{
	static const int psizes[] = { 4096, 16384, 65536, 1 << 20 };
	int psz = PICK(psizes), use_off = chance(3), got = 0, s, out;
	int fl = chance(2) ? SPLICE_F_NONBLOCK : 0, tfl = chance(2) ? SPLICE_F_NONBLOCK : 0;
	size_t len = rand_size((kind == 3 ? 64 : kind == 2 ? 8 : 2) * FZ_MiB);
	size_t tlen = rand_size(2 * FZ_MiB);
	long v[2][X_N] = { { 0 } }, expect = ANY, *x;
	loff_t off0 = rand_off(), off;

	if (kind < 2)
		describe("len %zu, offset %lld%s, into a %d-byte pipe with flags %#x, tee %zu with flags %#x",
			 len, (long long)off0, use_off ? "" : " (unused)", psz,
			 fl, kind ? tlen : 0, tfl);
	else
		describe("len %zu, offset %lld%s, to %s", len, (long long)off0,
			 use_off ? "" : " (unused)", kind == 2 ? "a memfd" : "/dev/null");
	for (s = 0; s < 2; s++) {
		x = v[s];
		off = off0;
		out = kind == 3 ? null_fd : kind == 2 ? memfds[s] : pipes[s][1];
		got = kind < 2 ? fcntl(out, F_SETPIPE_SZ, psz) : 0;
		if (got < 0)
			got = fcntl(out, F_GETPIPE_SZ);
		else if (kind == 2 && (ftruncate(out, 0) || lseek(out, 0, SEEK_SET)))
			return fz_fail(why, "resetting the memfd: %s", strerror(errno));
		x[X_RET] = kind < 2 ?
			   splice(fds[s][0], use_off ? &off : NULL, out, NULL, len, fl) :
			   sendfile(out, fds[s][0], use_off ? &off : NULL, len);
		x[X_RET] = x[X_RET] < 0 ? -errno : x[X_RET];
		x[X_OFF] = off - off0;
		if (kind == 1 && x[X_RET] > 0) {
			x[X_TEE] = tee(pipes[s][0], tpipes[s][1], tlen, tfl);
			x[X_TEE] = x[X_TEE] < 0 ? -errno : x[X_TEE];
			x[X_TEE_BYTES] = drain(tpipes[s][0], 0);
		}
		x[X_BYTES] = kind == 3 ? MAX(x[X_RET], 0) :
			     drain(kind < 2 ? pipes[s][0] : out, kind == 2);
	}
	if (!use_off || (off0 >= 0 && len <= (size_t)(LLONG_MAX - off0)))
		expect = kind < 2 ? (long)MIN(len, (size_t)MAX(got, 0)) : (long)len;
	return cmp_xfer(v, expect, why);
}

/* ---- mappings ---- */

static int op_mmap(long shared, char *why)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_NONE, PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	static const off_t offs[] = { 0, 0, 0, 4096, HPAGE, 1L << 30, 1L << 44 };
	static const size_t lens[] = { 16 * 4096, HPAGE + 4096, 16 * HPAGE, 64 * FZ_MiB };
	int prot = PICK(prots), fk = chance(8) ? 1 + rnd(2) : 0, s;
	int flags = (shared ? MAP_SHARED : MAP_PRIVATE) |
		    (chance(4) ? MAP_NORESERVE : 0);
	off_t off = chance(2) ? PICK(offs) : (off_t)rnd(1024) * 4096;
	size_t len = chance(4) ? (1 + rnd(8)) * HPAGE : 1 + rnd(PICK(lens));
	struct pair *m;
	void *p[2];
	long r[2];

	while (npairs && (npairs == MAX_PAIRS ||
			  sum_pairs(0) + fz_page > MAP_BUDGET))
		if (unmap_pair(pick_pair(), why))
			return FZ_FAIL;
	if (chance(3))
		len &= ~(fz_page - 1);
	len = MIN(len, MAP_BUDGET - sum_pairs(0));
	if (fz_quick)
		len = MIN(len, 16 * FZ_MiB);
	if (chance(6) && len <= touch_left())
		flags |= MAP_POPULATE;
	if (chance(24))
		off += 1 + rnd(4095);	/* EINVAL */
	describe("len %zu, prot %#x, flags %#x, fd %s, offset %lld", len, prot,
		 flags, fd_names[fk], (long long)off);
	for (s = 0; s < 2; s++) {
		p[s] = mmap(NULL, len, prot, flags, fds[s][fk], off);
		r[s] = p[s] == MAP_FAILED ? -errno : 0;
	}
	if (r[REF] || r[DEV]) {
		for (s = 0; s < 2; s++)
			if (!r[s])
				munmap(p[s], len);
		return same_ret("mmap", r[REF], r[DEV], why);
	}
	m = &pairs[npairs++];
	m->p[REF] = p[REF];
	m->p[DEV] = p[DEV];
	m->len = (len + fz_page - 1) & ~(fz_page - 1);
	m->shared = shared;
	m->touched = flags & MAP_POPULATE ? m->len : 0;
	return verify(m, 0, 64 * FZ_KiB, 0, why);
}

/* @part 0: all of a pair; 1: its head, its tail, or its middle (a split). */
static int op_munmap(long part, char *why)
{
	struct pair *m = pick_pair(), *n;
	size_t np = m->len / fz_page, a, b;
	long r[2];
	int s;

	if (!part || np < 2) {
		describe("%s", tag(m));
		return unmap_pair(m, why);
	}
	a = rnd(np);
	b = a + 1 + rnd(np - a);
	if (!a && b == np)
		b--;
	if (a && b < np && npairs == MAX_PAIRS)
		b = np;
	describe("%s: pages [%zu, %zu)", tag(m), a, b);
	for (s = 0; s < 2; s++)
		r[s] = munmap(m->p[s] + a * fz_page, (b - a) * fz_page) ? -errno : 0;
	if (a && b < np) {
		n = &pairs[npairs++];
		*n = *m;
		for (s = 0; s < 2; s++)
			n->p[s] += b * fz_page;
		n->len -= b * fz_page;
	}
	for (s = 0; s < 2 && !a; s++)
		m->p[s] += b * fz_page;
	m->len = a ? a * fz_page : m->len - b * fz_page;
	for (s = 0; s < npairs; s++)
		pairs[s].touched = MIN(pairs[s].touched, pairs[s].len);
	return same_ret("munmap", r[REF], r[DEV], why);
}

/*
 * A failed MREMAP_FIXED that shrinks may already have unmapped the tail
 * (mremap_to() unmaps it before vma_to_resize() can refuse the range):
 * both sides alike, and then the pair is @nlen bytes long.
 */
static int mremap_lost_tail(struct pair *m, size_t nlen, char *why)
{
	long r[2];
	int s;

	for (s = 0; s < 2; s++)
		r[s] = msync(m->p[s] + nlen, m->len - nlen, MS_ASYNC) ? -errno : 0;
	if (same_ret("msync of the tail after the failed mremap", r[REF], r[DEV], why))
		return FZ_FAIL;
	if (r[REF] == -ENOMEM)
		m->len = nlen;
	m->touched = MIN(m->touched, m->len);
	return FZ_PASS;
}

/* The address space as /proc/self/maps lists it, read once per check. */
struct vma {
	unsigned long start, end;
	char path[128];		/* the mapped file, "" for anonymous memory */
};

#define MAX_VMAS	8192
static struct vma maps[MAX_VMAS];

/* Read /proc/self/maps into maps[]: the number of VMAs, -1 if unreadable. */
static int read_maps(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (n < MAX_VMAS && fgets(line, sizeof(line), f)) {
		maps[n].path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %127s", &maps[n].start,
			   &maps[n].end, maps[n].path) >= 2)
			n++;
	}
	fclose(f);
	return n;
}

/* Of the @n VMAs in maps[], those that make up [p, p + len). */
static int vmas_in(int n, const unsigned char *p, size_t len)
{
	unsigned long lo = (unsigned long)p, hi = lo + len;
	int i, count = 0;

	for (i = 0; i < n; i++)
		count += maps[i].start < hi && maps[i].end > lo;
	return count;
}

/* @kind 0: grow, 1: shrink (both may move), 2: move to a given address. */
static int op_mremap(long kind, char *why)
{
	static const char *const kinds[] = { "grow", "shrink", "move" };
	struct pair *m = pick_pair();
	size_t np = m->len / fz_page, nlen;
	size_t room = (MAP_BUDGET - sum_pairs(0)) / fz_page;
	void *q[2], *t[2] = { NULL, NULL };
	int flags = MREMAP_MAYMOVE, s, nvmas;
	long r[2];

	if (kind == 0 && !room)
		kind = 1;
	if (kind == 0)
		nlen = (np + 1 + rnd(MIN(room, 4096))) * fz_page;
	else if (kind == 1)
		nlen = (1 + rnd(np)) * fz_page;
	else
		nlen = (chance(2) ? np : 1 + rnd(np + MIN(room, np))) * fz_page;
	describe("%s: %s to %zu bytes", tag(m), kinds[kind], nlen);
	/*
	 * mremap() needs the range in one VMA (else EFAULT).  Whether two
	 * neighbouring VMAs of a side merged depends on its history (THP
	 * alignment, anon_vma), not on the device: compare only alike ranges.
	 */
	nvmas = read_maps();
	if (vmas_in(nvmas, m->p[REF], m->len) != vmas_in(nvmas, m->p[DEV], m->len)) {
		mremap_skipped++;
		return FZ_PASS;
	}
	/*
	 * 7.x (not 6.12) moves a range of several VMAs in one call (same length,
	 * MREMAP_FIXED), but only VMAs it knows: vma_multi_allowed() takes a
	 * file with its own get_unmapped_area only when vma_is_shmem(), which
	 * is shmem_vm_ops.  shared_clear=driver's VMAs carry the driver's ops,
	 * so that move fails with EFAULT where /dev/zero's succeeds: a cost
	 * of driver mode (README), not compared here.
	 */
	if (driver_mode && m->shared && kind == 2 && nlen == m->len &&
	    vmas_in(nvmas, m->p[DEV], m->len) > 1) {
		mremap_skipped++;
		return FZ_PASS;
	}
	for (s = 0; s < 2; s++) {
		if (kind == 2) {
			t[s] = mmap(NULL, nlen, PROT_NONE, MAP_PRIVATE |
				    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			flags |= MREMAP_FIXED;
		}
		q[s] = mremap(m->p[s], m->len, nlen, flags, t[s]);
		r[s] = q[s] == MAP_FAILED ? -errno : 0;
		if (r[s] && t[s] && t[s] != MAP_FAILED)
			munmap(t[s], nlen);
	}
	if (r[REF] || r[DEV]) {
		if (same_ret("mremap", r[REF], r[DEV], why))
			return FZ_FAIL;
		return kind == 2 && nlen < m->len ? mremap_lost_tail(m, nlen, why) : FZ_PASS;
	}
	np = MIN(m->len, nlen);
	m->p[REF] = q[REF];
	m->p[DEV] = q[DEV];
	m->len = nlen;
	m->touched = MIN(m->touched, nlen);
	if (verify(m, 0, fz_page, 0, why))
		return FZ_FAIL;
	return verify(m, np - fz_page, 4 * fz_page, 0, why);
}

/* madvise(@arg), or RC_*, on a page-aligned range of a pair; then compare. */
static int op_range(long arg, char *why)
{
	static const int prots[] = {
		PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
		PROT_READ | PROT_EXEC,
	};
	int prot = PICK(prots), s;
	struct pair *m = pick_pair();
	size_t off, n;
	long r[2];

	pick_range(m, 1, &off, &n);
	if (arg == RC_MPROTECT)
		describe("%s: [%zu, +%zu), prot %#x", tag(m), off, n, prot);
	else
		describe("%s: [%zu, +%zu)", tag(m), off, n);
	for (s = 0; s < 2; s++) {
		r[s] = arg == RC_MPROTECT ? mprotect(m->p[s] + off, n, prot) :
		       arg == RC_MLOCK ? mlock(m->p[s] + off, n) :
		       arg == RC_MUNLOCK ? munlock(m->p[s] + off, n) :
		       madvise(m->p[s] + off, n, arg);
		r[s] = r[s] ? -errno : 0;
		/* Without an unlimited RLIMIT_MEMLOCK both cannot stay locked. */
		if (arg == RC_MLOCK && !r[s] && !memlock_unlimited)
			munlock(m->p[s] + off, n);
	}
	if (same_ret(op_name, r[REF], r[DEV], why) ||
	    verify(m, off, n, arg == MADV_FREE, why))
		return FZ_FAIL;
	if (arg != MADV_FREE || r[REF])
		return FZ_PASS;
	/* Whether MADV_FREE dropped a page is up to reclaim: make sure. */
	for (s = 0; s < 2; s++)
		r[s] = madvise(m->p[s] + off, n, MADV_DONTNEED) ? -errno : 0;
	if (same_ret("MADV_DONTNEED after MADV_FREE", r[REF], r[DEV], why))
		return FZ_FAIL;
	return verify(m, off, n, 0, why);
}

/* @store 1: store a pattern to a range of a pair, 0: compare a range. */
static int op_access(long store, char *why)
{
	struct pair *m = pick_pair();
	unsigned int ws = rnd64() | 1;
	size_t off, n;

	pick_range(m, 0, &off, &n);
	if (store)
		describe("%s: [%zu, +%zu), pattern %#x", tag(m), off, n, ws);
	else
		describe("%s: [%zu, +%zu)", tag(m), off, n);
	m->touched = MIN(m->len, m->touched + n);
	if (store && access_range(m, off, n, ws, 0, why))
		return FZ_FAIL;
	return verify(m, off > 64 ? off - 64 : 0, n + 128, 0, why);
}

/* ---- fork, threads ---- */

/* The child loads, reads the devices into the first half, stores to the rest. */
static void fork_child(struct pair *m, size_t off, size_t n, unsigned int ws,
		       int fd)
{
	char why[FZ_WHYLEN] = "";
	ssize_t r[2];

	signal(SIGALRM, SIG_DFL);
	alarm(watchdog);
	if (!access_range(m, off, n, 0, 0, why)) {
		pair_rw(m, off, n / 2, 0, r);
		if (!pair_settle(m, off, n / 2, r, rp.m, why) &&
		    !access_range(m, off + n / 2, n - n / 2, ws, 0, why) &&
		    !access_range(m, off, n, 0, 0, why))
			_exit(0);
	}
	_exit(write(fd, why, strlen(why) + 1) < 0 ? 2 : 1);
}

static int op_fork(long arg, char *why)
{
	struct pair *m = pick_pair();
	unsigned int ws = rnd64() | 1;
	char msg[FZ_WHYLEN] = "";
	int pfd[2], st = 0;
	size_t off, n;

	(void)arg;
	pick_range(m, 0, &off, &n);
	n = MIN(n, 4 * FZ_MiB);
	rand_params(&methods[rnd(M_NREAD)], 0);
	describe("%s: [%zu, +%zu), the child reads by %s at offset %lld, stores pattern %#x",
		 tag(m), off, n, rp.m->name, (long long)rp.off, ws);
	m->touched = MIN(m->len, m->touched + n);
	if (pipe(pfd))
		return fz_fail(why, "pipe: %s", strerror(errno));
	fflush(stdout);
	child_pid = fork();
	if (child_pid == 0)
		fork_child(m, off, n, ws, pfd[1]);
	close(pfd[1]);
	if (child_pid > 0 && read(pfd[0], msg, sizeof(msg) - 1) < 0)
		msg[0] = '\0';
	close(pfd[0]);
	st = child_pid > 0 && waitpid(child_pid, &st, 0) == child_pid ? st : -1;
	child_pid = 0;
	if (st)
		return fz_fail(why, "child: status %#x: %s", st, msg);
	return access_range(m, off, n, 0, 0, why);
}

struct worker {
	pthread_t tid;
	uint64_t rng;
	struct pair *m;
	const struct method *mt;
	size_t off, n;
	ssize_t r[2];
};

static int workers_left;

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	rng = w->rng;
	rand_params(&methods[rnd(M_NREAD)], 1);
	w->mt = rp.m;
	pair_rw(w->m, w->off, w->n, 0, w->r);
	__atomic_sub_fetch(&workers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Threads read into ranges of pairs while this one zaps them with
 * MADV_DONTNEED: the reads leave zeros, the zaps zeros (private) or the
 * same content (shared), on both sides alike whatever the timing.
 */
static int op_threads(long arg, char *why)
{
	int nw = 2 + rnd(NWORKERS - 1), i, started = 0, ret = FZ_PASS;
	struct worker w[NWORKERS], *x;
	size_t a, b;

	(void)arg;
	for (i = 0; i < nw; i++) {
		w[i].rng = rnd64();
		w[i].m = pick_pair();
		pick_range(w[i].m, 0, &w[i].off, &w[i].n);
		w[i].n = MIN(w[i].n, 4 * FZ_MiB);
	}
	describe("%d threads, the first into %s [%zu, +%zu)", nw, tag(w[0].m),
		 w[0].off, w[0].n);
	workers_left = nw;
	for (i = 0; i < nw; i++)
		started += !pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
	do {
		for (i = 0; i < 2 * nw && started == nw; i++) {
			x = &w[i / 2];
			a = x->off / fz_page * fz_page;
			b = (x->off + x->n + fz_page - 1) / fz_page * fz_page;
			madvise(x->m->p[i & 1] + a, b - a, MADV_DONTNEED);
		}
	} while (started == nw && __atomic_load_n(&workers_left, __ATOMIC_ACQUIRE));
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	if (started < nw)
		return fz_fail(why, "pthread_create failed");
	for (i = 0; i < nw && !ret; i++)
		ret = pair_settle(w[i].m, w[i].off, w[i].n, w[i].r, w[i].mt, why);
	return ret;
}

/* ---- module parameters, changed all along by a thread ---- */

static struct {
	const char *name;
	char path[96], saved[64];
	int ok;
} params[] = {
	{ .name = "chunk_size" }, { .name = "force_variant" },
	{ .name = "nt_threshold" },
};

static int param_stop, param_running;
static unsigned long param_writes, param_errors;
static char param_err[FZ_WHYLEN];
static pthread_t param_tid;

static void *param_main(void *arg)
{
	/* every loop the CPU runs, as the driver names them, and auto */
	static const char *const names[] = FZ_LOOP_NAMES;
	const char *variants[FZ_NR_LOOPS + 1] = { "auto" };
	size_t nvariants = 1, i;
	static const size_t chunks[] = { 4096, 8192, 65536, HPAGE, 8 * FZ_MiB };
	static const size_t nts[] = { 0, 4096, 1048576, 134217728 };
	struct timespec ts = { 0, 0 };
	char val[32];
	int k, err;

	rng = *(uint64_t *)arg;
	for (i = 0; i < FZ_ARRAY_SIZE(names); i++)
		if (fz_arch_runs(names[i]))
			variants[nvariants++] = names[i];
	while (!__atomic_load_n(&param_stop, __ATOMIC_RELAXED)) {
		k = rnd(FZ_ARRAY_SIZE(params));
		if (k == 1)
			snprintf(val, sizeof(val), "%s", variants[rnd(nvariants)]);
		else
			snprintf(val, sizeof(val), "%zu", k ? PICK(nts) : chance(2) ?
				 PICK(chunks) : 4096 + rnd(8 * FZ_MiB - 4095));
		err = params[k].ok ? fz_write_file(params[k].path, val) : 0;
		param_writes += params[k].ok;
		if (err && !param_errors++)
			snprintf(param_err, sizeof(param_err), "%s to %s: %s", val,
				 params[k].path, strerrorname_np(-err));
		ts.tv_nsec = rnd(2000000);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Async-signal-safe: the watchdog calls it too. */
static void params_restore(void)
{
	size_t k;

	for (k = 0; k < FZ_ARRAY_SIZE(params); k++)
		if (params[k].ok)
			fz_write_file(params[k].path, params[k].saved);
}

static int test_params(const void *arg, char *why)
{
	char val[64];
	size_t k;

	(void)arg;
	if (!fz_module)
		return fz_skip(why, "module tests disabled (FZ_MODULE=0)");
	for (k = 0; k < FZ_ARRAY_SIZE(params); k++)
		if (!params[k].ok || fz_read_file(params[k].path, val, sizeof(val)) ||
		    strcmp(val, params[k].saved))
			return fz_fail(why, "%s: %s after the run, was %s",
				       params[k].path, params[k].ok ? val : "unreadable",
				       params[k].saved);
	if (!param_running)
		return fz_fail(why, "could not start the parameter thread");
	fz_diag("  %lu parameter writes raced the operations", param_writes);
	if (param_errors)
		return fz_fail(why, "%lu of %lu parameter writes failed, first %s",
			       param_errors, param_writes, param_err);
	return FZ_PASS;
}

/* ---- the operations and the run ---- */

struct op {
	const char *name;
	int (*fn)(long arg, char *why);
	long arg;
	unsigned int weight;
	int need_pair;
};

/* ops[0..2] also stand in for others: see pick_op(). */
static const struct op ops[] = {
	{ "mmap_private", op_mmap, 0, 4, 0 },
	{ "mmap_shared", op_mmap, 1, 4, 0 },
	{ "munmap", op_munmap, 0, 2, 1 },
	{ "munmap_part", op_munmap, 1, 3, 1 },
	{ "mremap_grow", op_mremap, 0, 2, 1 },
	{ "mremap_shrink", op_mremap, 1, 2, 1 },
	{ "mremap_move", op_mremap, 2, 2, 1 },
	{ "mprotect", op_range, RC_MPROTECT, 3, 1 },
	{ "mlock", op_range, RC_MLOCK, 1, 1 },
	{ "munlock", op_range, RC_MUNLOCK, 1, 1 },
	{ "MADV_DONTNEED", op_range, MADV_DONTNEED, 2, 1 },
	{ "MADV_REMOVE", op_range, MADV_REMOVE, 2, 1 },
	{ "MADV_FREE", op_range, MADV_FREE, 2, 1 },
	{ "MADV_POPULATE_READ", op_range, MADV_POPULATE_READ, 2, 1 },
	{ "MADV_POPULATE_WRITE", op_range, MADV_POPULATE_WRITE, 2, 1 },
	{ "MADV_COLD", op_range, MADV_COLD, 2, 1 },
	{ "MADV_PAGEOUT", op_range, MADV_PAGEOUT, 2, 1 },
	{ "store", op_access, 1, 8, 1 },
	{ "compare", op_access, 0, 4, 1 },
	{ "fork", op_fork, 0, 1, 1 },
	{ "threads", op_threads, 0, 1, 1 },
	{ "read", op_io, M_READ, 6, 0 },
	{ "pread", op_io, M_PREAD, 4, 0 },
	{ "readv", op_io, M_READV, 5, 0 },
	{ "preadv", op_io, M_PREADV, 3, 0 },
	{ "preadv2", op_io, M_PREADV2, 4, 0 },
	{ "preadv2_nowait", op_io, M_NOWAIT, 4, 0 },
	{ "preadv2_hipri", op_io, M_HIPRI, 3, 0 },
	{ "write", op_io, M_WRITE, 2, 0 },
	{ "pwrite", op_io, M_PWRITE, 1, 0 },
	{ "writev", op_io, M_WRITEV, 2, 0 },
	{ "pwritev2_nowait", op_io, M_PWRITEV2, 1, 0 },
	{ "splice", op_xfer, 0, 3, 0 },
	{ "splice_tee", op_xfer, 1, 2, 0 },
	{ "sendfile_memfd", op_xfer, 2, 2, 0 },
	{ "sendfile_null", op_xfer, 3, 2, 0 },
};

static unsigned long op_count[FZ_ARRAY_SIZE(ops)], executed;
static double deadline;
static int failed, capped;

/* By weight; but mmap while there is no pair, munmap when over budget. */
static const struct op *pick_op(void)
{
	unsigned int total = 0, r;
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(ops); i++)
		total += ops[i].weight;
	r = rnd(total);
	for (i = 0; r >= ops[i].weight; i++)
		r -= ops[i].weight;
	if (ops[i].need_pair && !npairs)
		return &ops[rnd(2)];
	return npairs && !touch_left() ? &ops[2] : &ops[i];
}

static void on_alarm(int sig)
{
	struct timespec ts = { 0, 20000000 };
	char msg[1024];

	(void)sig;
	snprintf(msg, sizeof(msg), "not ok %lu - %s # watchdog: seed %llu op %lu %s still running after %d s: %s\n1..%lu\n",
		 reported + 1, batch_name, seed, op_index, op_name, watchdog,
		 desc, reported + 1);
	say(msg);
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	__atomic_store_n(&param_stop, 1, __ATOMIC_RELAXED);
	nanosleep(&ts, NULL);	/* lets the parameter thread finish a write */
	params_restore();
	_exit(1);
}

/* On a failure: the lines of /proc/self/smaps that cover a pair (VmFlags too). */
static void dump_pair_maps(void)
{
	unsigned long a, b;
	char line[512];
	int show = 0, i, s;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			show = 0;
			for (i = 0; i < npairs; i++)
				for (s = 0; s < 2; s++)
					if (a < (unsigned long)pairs[i].p[s] + pairs[i].len &&
					    b > (unsigned long)pairs[i].p[s])
						show = 1;
		} else if (strncmp(line, "VmFlags:", 8)) {
			continue;
		}
		if (show)
			fz_diag("  %.*s", (int)strcspn(line, "\n"), line);
	}
	fclose(f);
	for (i = 0; i < npairs; i++)
		fz_diag("  %s: %s %p, %s %p", tag(&pairs[i]), fz_ref_name,
			pairs[i].p[REF], fz_dev_name, pairs[i].p[DEV]);
}

/*
 * The fuzzer's own invariant, checked after every operation: each side of
 * each pair is mapped from its own device, page for page, and no two pairs
 * overlap.  Without it, a mapping lost by the bookkeeping lets later
 * operations land on whatever was mapped there next.
 */
static int pairs_consistent(char *why)
{
	unsigned long lo, hi, covered;
	int i, j, s, v, n;

	for (i = 0; i < npairs; i++)
		for (j = 0; j < npairs; j++)
			for (s = 0; s < 2; s++)
				if (i != j && pairs[i].p[s] < pairs[j].p[s] + pairs[j].len &&
				    pairs[j].p[s] < pairs[i].p[s] + pairs[i].len)
					return fz_fail(why, "fuzzer: %s overlaps pair %d", tag(&pairs[i]), j);
	n = read_maps();
	for (i = 0; i < npairs; i++) {
		for (s = 0; s < 2; s++) {
			lo = (unsigned long)pairs[i].p[s];
			hi = lo + pairs[i].len;
			covered = 0;
			for (v = 0; v < n; v++) {
				if (maps[v].end <= lo || maps[v].start >= hi)
					continue;
				if (strcmp(maps[v].path, s ? fz_dev_path : fz_ref_path))
					break;
				covered += MIN(maps[v].end, hi) - MAX(maps[v].start, lo);
			}
			if (n >= 0 && covered != hi - lo)
				return fz_fail(why, "fuzzer: %s: %s side not mapped from %s (%lu of %lu bytes)",
					       tag(&pairs[i]), s ? fz_dev_name : fz_ref_name,
					       s ? fz_dev_path : fz_ref_path, covered, hi - lo);
		}
	}
	return FZ_PASS;
}

static int run_ops(unsigned long first, unsigned long last, char *why)
{
	char sub[FZ_WHYLEN];
	const struct op *o;
	int ret;

	for (op_index = first; op_index < last; op_index++) {
		if (fz_now() > deadline) {
			capped = 1;
			break;
		}
		o = pick_op();
		op_name = o->name;
		desc[0] = '\0';
		sub[0] = '\0';
		op_count[o - ops]++;
		executed++;
		alarm(watchdog);
		ret = o->fn(o->arg, sub);
		if (ret == FZ_PASS)
			ret = pairs_consistent(sub);
		alarm(0);
		if (ret == FZ_PASS)
			continue;
		failed = 1;
		fz_diag("seed %llu op %lu %s: %s", seed, op_index, op_name, desc);
		fz_diag("  %s", sub);
		dump_pair_maps();
		fz_diag("  replay: FZ_FUZZ_SEED=%llu FZ_FUZZ_OPS=%lu FZ_FUZZ_VERBOSE=1",
			seed, op_index + 1);
		return fz_fail(why, "seed %llu op %lu %s: %s: %s", seed, op_index,
			       op_name, desc, sub);
	}
	return FZ_PASS;
}

static void setup(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	static uint64_t prng;
	int s, any = 0, p[2];
	size_t k;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sa.sa_handler = on_alarm;
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	memlock_unlimited = !setrlimit(RLIMIT_MEMLOCK, &rl);
	for (s = 0; s < 2; s++) {
		fds[s][1] = open(s ? fz_dev_path : fz_ref_path, O_RDONLY);
		fds[s][2] = open(s ? fz_dev_path : fz_ref_path, O_WRONLY);
		memfds[s] = memfd_create("t_fuzz", 0);
		if (fds[s][1] < 0 || fds[s][2] < 0 || memfds[s] < 0 ||
		    pipe(pipes[s]) || pipe(tpipes[s]) ||
		    fcntl(pipes[s][0], F_SETFL, O_NONBLOCK) ||
		    fcntl(tpipes[s][0], F_SETFL, O_NONBLOCK))
			break;
	}
	null_fd = open("/dev/null", O_WRONLY);
	scratch = fz_mmap(SCRATCH_LEN + fz_page, PROT_READ | PROT_WRITE);
	ro_area = fz_mmap(AREA_LEN, PROT_READ);
	if (s < 2 || null_fd < 0 || !scratch || !ro_area || pipe(p)) {
		fz_report(FZ_FAIL, "fuzz_setup", strerror(errno));
		exit(fz_exit());
	}
	hole = scratch + SCRATCH_LEN;
	set_hole(0);
	ref_no_splice = splice(fds[REF][0], NULL, p[1], NULL, 1, 0) < 0 &&
			errno == EINVAL;
	close(p[0]);
	close(p[1]);
	if (ref_no_splice)
		fz_diag("%s has no splice_read (6.1): splice and sendfile are checked on %s alone",
			fz_ref_name, fz_dev_name);
	if (fz_module) {
		char mode[16];

		driver_mode = !fz_read_file(FZ_PARAMS "/shared_clear", mode, sizeof(mode)) &&
			      !strcmp(mode, "driver");
	}
	for (k = 0; k < FZ_ARRAY_SIZE(params); k++) {
		snprintf(params[k].path, sizeof(params[k].path), FZ_PARAMS "/%s",
			 params[k].name);
		params[k].ok = fz_module && !fz_read_file(params[k].path,
				params[k].saved, sizeof(params[k].saved));
		any |= params[k].ok;
	}
	prng = seed ^ 0x5eed5eed5eedULL;
	param_running = any && !pthread_create(&param_tid, NULL, param_main, &prng);
	fz_diag("module parameters %s", param_running ? "changed by a thread all along" :
		"left alone (FZ_MODULE=0, or not found)");
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

/*
 * Without address-space randomisation a seed replays with the same
 * mappings next to each other (VMA merges depend on neighbours).
 */
static void no_aslr(char **argv)
{
	int pers = personality(0xffffffff);

	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
	    personality(pers | ADDR_NO_RANDOMIZE) != -1)
		execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
	const char *sv = argc > 1 ? argv[1] : getenv("FZ_FUZZ_SEED");
	unsigned long nops, secs, first, last;
	char why[FZ_WHYLEN];
	struct timespec ts;
	double t0;
	size_t i;
	int st;

	no_aslr(argv);
	fz_setup(argc, argv, &fds[DEV][0], &fds[REF][0]);
	clock_gettime(CLOCK_REALTIME, &ts);
	seed = sv && *sv ? strtoull(sv, NULL, 0) :
	       ((unsigned long long)ts.tv_sec * 1000000007ULL) ^ ts.tv_nsec ^
	       ((unsigned long long)getpid() << 40);
	nops = env_ul("FZ_FUZZ_OPS", fz_quick ? 500 : 2000);
	secs = env_ul("FZ_FUZZ_SECONDS", 60);
	verbose = env_ul("FZ_FUZZ_VERBOSE", 0);
	watchdog = env_ul("FZ_FUZZ_WATCHDOG", 60);
	rng = seed;
	fz_diag("seed %llu: %lu operations, at most %lu s, watchdog %d s per operation (replay: FZ_FUZZ_SEED=%llu)",
		seed, nops, secs, watchdog, seed);
	setup();

	t0 = fz_now();
	deadline = t0 + secs;
	for (first = 0; first < nops && !failed && !capped; first = last) {
		last = MIN(first + BATCH, nops);
		snprintf(batch_name, sizeof(batch_name), "fuzz_ops_%04lu_%04lu",
			 first, last - 1);
		why[0] = '\0';
		st = run_ops(first, last, why);
		if (op_index == first && !failed)
			break;
		snprintf(batch_name, sizeof(batch_name), "fuzz_ops_%04lu_%04lu",
			 first, failed ? op_index : op_index - 1);
		fz_report(st, batch_name, why);
		reported++;
	}
	__atomic_store_n(&param_stop, 1, __ATOMIC_RELAXED);
	if (param_running)
		pthread_join(param_tid, NULL);
	params_restore();
	while (npairs)
		unmap_pair(&pairs[0], why);
	if (capped)
		fz_diag("time cap of %lu s reached after %lu operations", secs,
			executed);
	fz_diag("seed %llu: %lu operations in %.1f s, by type:", seed, executed,
		fz_now() - t0);
	if (mremap_skipped)
		fz_diag("  %lu mremap calls not compared: the two ranges were split into different VMAs, or (driver mode) a move of several",
			mremap_skipped);
	for (i = 0; i < FZ_ARRAY_SIZE(ops); i++)
		fz_diag("  %-20s %lu", ops[i].name, op_count[i]);
	fz_run(test_params, NULL, "fuzz_module_parameters_raced");
	return fz_exit();
}
