// SPDX-License-Identifier: GPL-2.0
/*
 * t_mmap - mmap() of the device: private and shared mappings must behave
 * like those of /dev/zero (anonymous memory; a fresh shared object per
 * mmap()).  Semantic tests run on the device; when one fails it is re-run
 * on the reference and the reason says whether /dev/zero passes.  Outcome
 * tests (errno, signal on access) compare both devices directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fztest.h"

#define PG	4096UL

static int dev, ref;

/* Map @path (opened O_RDWR, closed again); NULL and errno set on failure. */
static unsigned char *map_path(const char *path, size_t len, int prot,
			       int flags, off_t off)
{
	int fd = open(path, O_RDWR), err;
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(NULL, len, prot, flags, fd, off);
	err = errno;
	close(fd);
	errno = err;
	return p == MAP_FAILED ? NULL : p;
}

static unsigned char *map_rw(const char *path, size_t len, int shared)
{
	return map_path(path, len, PROT_READ | PROT_WRITE,
			shared ? MAP_SHARED : MAP_PRIVATE, 0);
}

static void fill_pattern(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 31 + seed) | 1;
}

static int check_pattern(const unsigned char *p, size_t len, unsigned int seed,
			 char *why)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != ((unsigned char)(i * 31 + seed) | 1))
			return fz_fail(why, "offset %zu is 0x%02x, expected 0x%02x",
				       i, p[i], (unsigned char)(i * 31 + seed) | 1);
	return FZ_PASS;
}

/* ---- semantic tests: int fn(path, shared, why) ---- */

typedef int (*map_fn)(const char *path, int shared, char *why);

static int t_zero_fill(const char *path, int shared, char *why)
{
	size_t len = 64 * PG;
	unsigned char *p = map_rw(path, len, shared);
	int ret;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	ret = check_zero(p, len, why);
	if (!ret) {
		fill_pattern(p, len, 1);
		ret = check_pattern(p, len, 1, why);
	}
	munmap(p, len);
	return ret;
}

/*
 * Parent writes A, forks; child checks A, writes B; parent checks (B if
 * shared, else A), writes C; child checks (C if shared, else B).
 */
static int t_fork(const char *path, int shared, char *why)
{
	size_t len = 16 * PG;
	unsigned char *p = map_rw(path, len, shared);
	int to_child[2], to_parent[2], st, ret;
	char c = 0, sub[FZ_WHYLEN];
	pid_t pid;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (pipe(to_child) || pipe(to_parent))
		return fz_fail(why, "pipe: %s", strerror(errno));
	fill_pattern(p, len, 'A');
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (check_pattern(p, len, 'A', sub))
			_exit(1);
		fill_pattern(p, len, 'B');
		if (write(to_parent[1], "x", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(2);
		_exit(check_pattern(p, len, shared ? 'C' : 'B', sub) ? 3 : 0);
	}
	if (read(to_parent[0], &c, 1) != 1)
		ret = fz_fail(why, "child did not see the parent's data before fork");
	else if (check_pattern(p, len, shared ? 'B' : 'A', sub))
		ret = fz_fail(why, "parent after child's write: %s", sub);
	else
		ret = FZ_PASS;
	fill_pattern(p, len, 'C');
	if (write(to_child[1], "x", 1) != 1)
		ret = fz_fail(why, "pipe write failed");
	waitpid(pid, &st, 0);
	if (!ret && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		ret = fz_fail(why, "child failed (status 0x%x: 1 = pre-fork data, 3 = data after parent's write)",
			      st);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	munmap(p, len);
	return ret;
}

static int t_second_map_fresh(const char *path, int shared, char *why)
{
	size_t len = 8 * PG;
	unsigned char *a = map_rw(path, len, shared), *b;
	int ret;

	if (!a)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill_pattern(a, len, 2);
	b = map_rw(path, len, shared);
	if (!b)
		ret = fz_fail(why, "second mmap: %s", strerror(errno));
	else
		ret = check_zero(b, len, why);
	if (b)
		munmap(b, len);
	if (!ret)
		ret = check_pattern(a, len, 2, why);
	munmap(a, len);
	return ret;
}

static int t_partial_munmap(const char *path, int shared, char *why)
{
	size_t len = 16 * PG;
	unsigned char *p = map_rw(path, len, shared);
	int ret;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill_pattern(p, len, 3);
	if (munmap(p + 4 * PG, 8 * PG))
		ret = fz_fail(why, "munmap middle: %s", strerror(errno));
	else if (check_pattern(p, 4 * PG, 3, why))
		ret = FZ_FAIL;
	else if (fz_probe(p + 6 * PG, 0) != SIGSEGV)
		ret = fz_fail(why, "unmapped middle still accessible");
	else
		ret = check_pattern(p + 12 * PG, 4 * PG, 3 + 12 * PG * 31, why);
	munmap(p, 4 * PG);
	munmap(p + 12 * PG, 4 * PG);
	return ret;
}

static int t_mprotect_split(const char *path, int shared, char *why)
{
	size_t len = 8 * PG;
	unsigned char *p = map_rw(path, len, shared);
	int ret = FZ_PASS, sig;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill_pattern(p, len, 4);
	if (mprotect(p + 2 * PG, 4 * PG, PROT_READ))
		ret = fz_fail(why, "mprotect: %s", strerror(errno));
	else if ((sig = fz_probe(p + 3 * PG + 5, 1)) != SIGSEGV)
		ret = fz_fail(why, "write to read-only part gave signal %d, expected SIGSEGV",
			      sig);
	else if (fz_probe(p + 1 * PG, 1) || fz_probe(p + 7 * PG, 1))
		ret = fz_fail(why, "writable parts no longer writable");
	else
		ret = check_pattern(p, len, 4, why);
	munmap(p, len);
	return ret;
}

static int t_mremap(const char *path, int shared, char *why)
{
	unsigned char *p = map_rw(path, 16 * PG, shared), *q, *dst;
	int ret = FZ_PASS;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill_pattern(p, 16 * PG, 5);
	q = mremap(p, 16 * PG, 4 * PG, 0);		/* shrink */
	if (q == MAP_FAILED)
		return fz_fail(why, "mremap shrink: %s", strerror(errno));
	if (check_pattern(q, 4 * PG, 5, why))
		return fz_fail(why, "after shrink: data lost");
	/* move to a fixed place */
	dst = mmap(NULL, 4 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = mremap(q, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (p != dst)
		return fz_fail(why, "mremap move: %s", strerror(errno));
	if (fz_probe(q, 0) != SIGSEGV)
		ret = fz_fail(why, "old address still mapped after move");
	else if (check_pattern(p, 4 * PG, 5, why))
		ret = fz_fail(why, "after move: data lost");
	/* grow in place or moved; the new part is checked by mremap_grow */
	q = mremap(p, 4 * PG, 64 * PG, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return fz_fail(why, "mremap grow: %s", strerror(errno));
	if (!ret && check_pattern(q, 4 * PG, 5, why))
		ret = fz_fail(why, "after grow: data lost");
	munmap(q, 64 * PG);
	return ret;
}

static int t_madv_dontneed_private(const char *path, int shared, char *why)
{
	size_t len = 16 * PG;
	unsigned char *p = map_rw(path, len, shared);
	int ret;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill_pattern(p, len, 6);
	if (madvise(p, len, MADV_DONTNEED))
		ret = fz_fail(why, "madvise: %s", strerror(errno));
	else
		ret = check_zero(p, len, why);
	munmap(p, len);
	return ret;
}

static int t_populate(const char *path, int shared, char *why)
{
	size_t len = 32 * PG, i;
	unsigned char *p, vec[32];
	int ret;

	p = map_path(path, len, PROT_READ | PROT_WRITE,
		     (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_POPULATE, 0);
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (mincore(p, len, vec))
		ret = fz_fail(why, "mincore: %s", strerror(errno));
	else
		ret = FZ_PASS;
	for (i = 0; i < 32 && !ret; i++)
		if (!(vec[i] & 1))
			ret = fz_fail(why, "page %zu not resident after MAP_POPULATE", i);
	if (!ret)
		ret = check_zero(p, len, why);
	munmap(p, len);
	return ret;
}

static int t_mlock(const char *path, int shared, char *why)
{
	size_t len = 32 * PG;
	unsigned char *p = map_rw(path, len, shared);
	int ret;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (mlock(p, len))
		ret = fz_fail(why, "mlock: %s", strerror(errno));
	else if (check_zero(p, len, why))
		ret = FZ_FAIL;
	else if (fill_pattern(p, len, 7), check_pattern(p, len, 7, why))
		ret = FZ_FAIL;
	else if (munlock(p, len))
		ret = fz_fail(why, "munlock: %s", strerror(errno));
	else
		ret = FZ_PASS;
	munmap(p, len);
	return ret;
}

/* GUP: half the pages written, half never touched (must read as zero). */
static int t_vmsplice(const char *path, int shared, char *why)
{
	size_t len = 16 * PG;
	unsigned char *p = map_rw(path, len, shared), *buf;
	struct iovec iov = { NULL, len };
	ssize_t n, got = 0;
	int fds[2], ret;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	buf = malloc(len);
	fill_pattern(p, len / 2, 8);
	iov.iov_base = p;
	if (!buf || pipe(fds))
		return fz_fail(why, "setup failed");
	n = vmsplice(fds[1], &iov, 1, 0);
	while (n > 0 && got < n) {
		ssize_t r = read(fds[0], buf + got, n - got);

		if (r <= 0)
			break;
		got += r;
	}
	if (n != (ssize_t)len || got != n)
		ret = fz_fail(why, "vmsplice returned %zd, read back %zd (%s)",
			      n, got, strerror(errno));
	else if (check_pattern(buf, len / 2, 8, why))
		ret = FZ_FAIL;
	else
		ret = check_zero(buf + len / 2, len / 2, why);
	close(fds[0]);
	close(fds[1]);
	free(buf);
	munmap(p, len);
	return ret;
}

static int t_process_vm_readv(const char *path, int shared, char *why)
{
	size_t len = 16 * PG;
	unsigned char *p = map_rw(path, len, shared), *buf = malloc(len);
	struct iovec liov = { buf, len }, riov = { p, len };
	ssize_t n;
	int ret;

	if (!p || !buf)
		return fz_fail(why, "setup: %s", strerror(errno));
	fill_pattern(p, len / 2, 9);
	n = process_vm_readv(getpid(), &liov, 1, &riov, 1, 0);
	if (n != (ssize_t)len)
		ret = fz_fail(why, "process_vm_readv returned %zd (%s)", n,
			      strerror(errno));
	else if (check_pattern(buf, len / 2, 9, why))
		ret = FZ_FAIL;
	else
		ret = check_zero(buf + len / 2, len / 2, why);
	free(buf);
	munmap(p, len);
	return ret;
}

static int t_offset(const char *path, int shared, char *why)
{
	size_t len = 8 * PG;
	unsigned char *p;
	int sig, ret;

	p = map_path(path, len, PROT_READ | PROT_WRITE,
		     shared ? MAP_SHARED : MAP_PRIVATE, FZ_MiB);
	if (!p)
		return fz_fail(why, "mmap at offset 1 MiB: %s", strerror(errno));
	sig = fz_probe(p, 1);
	if (!sig)
		sig = fz_probe(p + len - 1, 1);
	if (sig)
		ret = fz_fail(why, "access gave signal %d (%s)", sig, strsignal(sig));
	else
		ret = check_zero(p, len, why);
	munmap(p, len);
	return ret;
}

static int t_huge_noreserve(const char *path, int shared, char *why)
{
	size_t len = 1UL << 40;
	unsigned char *p;
	int ret = FZ_PASS;

	(void)shared;
	p = map_path(path, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_NORESERVE, 0);
	if (!p)
		return fz_fail(why, "mmap 1 TiB: %s", strerror(errno));
	if (p[0] || p[len - 1])
		ret = fz_fail(why, "not zero at the ends");
	p[0] = 1;
	p[len - 1] = 2;
	if (!ret && (p[0] != 1 || p[len - 1] != 2 || p[len / 2]))
		ret = fz_fail(why, "writes at the ends not kept");
	munmap(p, len);
	return ret;
}

static int t_prot_none_then_rw(const char *path, int shared, char *why)
{
	size_t len = 8 * PG;
	unsigned char *p;
	int ret;

	p = map_path(path, len, PROT_NONE, shared ? MAP_SHARED : MAP_PRIVATE, 0);
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (fz_probe(p, 0) != SIGSEGV)
		ret = fz_fail(why, "PROT_NONE mapping readable");
	else if (mprotect(p, len, PROT_READ | PROT_WRITE))
		ret = fz_fail(why, "mprotect: %s", strerror(errno));
	else if (check_zero(p, len, why))
		ret = FZ_FAIL;
	else
		ret = (fill_pattern(p, len, 10), check_pattern(p, len, 10, why));
	munmap(p, len);
	return ret;
}

/* 8 threads creating, touching and destroying mappings for a second. */
struct churn {
	const char *path;
	unsigned int seed;
	unsigned long maps;
	char why[FZ_WHYLEN];
	int status;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	double end = fz_now() + 1.0;
	unsigned char *p;
	size_t len, i;

	while (!c->status && fz_now() < end) {
		len = (rand_r(&c->seed) % 64 + 1) * PG;
		p = map_rw(c->path, len, c->maps & 1);
		if (!p) {
			c->status = fz_fail(c->why, "mmap: %s", strerror(errno));
			break;
		}
		for (i = 0; i < len && !c->status; i += PG) {
			if (p[i] || p[i + PG - 1])
				c->status = fz_fail(c->why, "fresh %s page not zero",
						    c->maps & 1 ? "shared" : "private");
			p[i] = 0xA5;
		}
		munmap(p, len);
		c->maps++;
	}
	return NULL;
}

static int t_threads(const char *path, int shared, char *why)
{
	struct churn c[8];
	pthread_t tid[8];
	int i, ret = FZ_PASS;

	(void)shared;
	for (i = 0; i < 8; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].path = path;
		c[i].seed = i + 1;
		if (pthread_create(&tid[i], NULL, churn_main, &c[i]))
			return fz_fail(why, "pthread_create failed");
	}
	for (i = 0; i < 8; i++) {
		pthread_join(tid[i], NULL);
		if (c[i].status && !ret)
			ret = fz_fail(why, "thread %d after %lu mappings: %s", i,
				      c[i].maps, c[i].why);
	}
	return ret;
}

static long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * Map + touch + unmap 512 MiB shared three times: memory comes back.  The
 * baseline is taken after a warm-up round (page tables, slab caches).  The
 * tolerance is a quarter of one round (64 MiB at least): a mapping that is
 * not freed shows as a whole round or more, while what the allocator keeps
 * for a while (per-CPU lists hold 2 MiB folios too) does not; a smaller leak
 * is kmemleak's to find in the debug boots.
 */
static int t_memory_baseline(const char *path, int shared, char *why)
{
	size_t len = (fz_quick ? 128 : 512) * FZ_MiB, i;
	long before = 0, after = 0, tol = len / 4096 > 65536 ? len / 4096 : 65536;
	unsigned char *p;
	int round, tries;

	for (round = -1; round < 3; round++) {
		if (round == 0)
			before = mem_available_kb();
		if (before < 0)	/* every kernel since 3.14 has it */
			return fz_fail(why, "cannot read MemAvailable in /proc/meminfo");
		p = map_rw(path, len, shared);
		if (!p)
			return fz_fail(why, "mmap: %s", strerror(errno));
		for (i = 0; i < len; i += PG)
			p[i] = 1;
		munmap(p, len);
	}
	for (tries = 0; tries < 60; tries++) {
		after = mem_available_kb();
		if (after > before - tol)
			return FZ_PASS;
		usleep(50000);
	}
	return fz_fail(why, "MemAvailable %ld kB before, %ld kB after (tolerance %ld kB)",
		       before, after, tol);
}

struct map_case {
	const char *name;
	map_fn fn;
	int shared;
};

static const struct map_case map_cases[] = {
	{ "private_zero_fill", t_zero_fill, 0 },
	{ "shared_zero_fill", t_zero_fill, 1 },
	{ "private_fork_cow", t_fork, 0 },
	{ "shared_fork_visible_both_ways", t_fork, 1 },
	{ "private_second_mmap_fresh", t_second_map_fresh, 0 },
	{ "shared_second_mmap_fresh", t_second_map_fresh, 1 },
	{ "private_partial_munmap_middle", t_partial_munmap, 0 },
	{ "shared_partial_munmap_middle", t_partial_munmap, 1 },
	{ "private_mprotect_split_segv", t_mprotect_split, 0 },
	{ "shared_mprotect_split_segv", t_mprotect_split, 1 },
	{ "private_mremap_shrink_move_grow", t_mremap, 0 },
	{ "shared_mremap_shrink_move_grow", t_mremap, 1 },
	{ "private_madv_dontneed_rezeroes", t_madv_dontneed_private, 0 },
	{ "private_map_populate", t_populate, 0 },
	{ "shared_map_populate", t_populate, 1 },
	{ "private_mlock", t_mlock, 0 },
	{ "shared_mlock", t_mlock, 1 },
	{ "private_vmsplice_gup", t_vmsplice, 0 },
	{ "shared_vmsplice_gup", t_vmsplice, 1 },
	{ "private_process_vm_readv", t_process_vm_readv, 0 },
	{ "shared_process_vm_readv", t_process_vm_readv, 1 },
	{ "private_offset_1MiB_zero", t_offset, 0 },
	{ "private_1TiB_noreserve_touch_ends", t_huge_noreserve, 0 },
	{ "private_prot_none_then_rw", t_prot_none_then_rw, 0 },
	{ "shared_prot_none_then_rw", t_prot_none_then_rw, 1 },
	{ "threads_8_map_churn_1s", t_threads, 0 },
	{ "shared_memory_back_to_baseline", t_memory_baseline, 1 },
};

static int test_map_case(const void *arg, char *why)
{
	const struct map_case *c = arg;
	char sub[FZ_WHYLEN];
	int ret;

	ret = c->fn(fz_dev_path, c->shared, why);
	if (ret != FZ_FAIL)
		return ret;
	ret = c->fn(fz_ref_path, c->shared, sub);
	snprintf(why + strlen(why), FZ_WHYLEN - strlen(why), " (%s %s)",
		 fz_ref_name, ret == FZ_PASS ? "passes" : "fails too");
	return FZ_FAIL;
}

/* ---- outcome tests: compare a number between both devices ---- */

/* Access to a grown mapping beyond the original size: 0 or the signal. */
static long o_mremap_grow_beyond(const char *path, int shared)
{
	unsigned char *p = map_rw(path, 4 * PG, shared), *q;
	long ret;

	if (!p)
		return -errno;
	q = mremap(p, 4 * PG, 16 * PG, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return -errno;
	ret = fz_probe(q + 8 * PG, 0);
	if (!ret)
		ret = q[8 * PG] ? 1000 : 0;	/* not zero: 1000 */
	munmap(q, 16 * PG);
	return ret;
}

/* Data surviving MADV_DONTNEED: 1 if kept, 0 if zeroed, 2 otherwise. */
static long o_madv_dontneed(const char *path, int shared)
{
	unsigned char *p = map_rw(path, 4 * PG, shared);
	long ret;

	if (!p)
		return -errno;
	memset(p, 0x77, 4 * PG);
	if (madvise(p, 4 * PG, MADV_DONTNEED))
		return -errno;
	ret = p[5] == 0x77 ? 1 : p[5] == 0 ? 0 : 2;
	munmap(p, 4 * PG);
	return ret;
}

/* Mapping the shared object at an offset: 0 readable, else the signal. */
static long o_shared_offset(const char *path, int shared)
{
	unsigned char *p;
	long ret;

	p = map_path(path, 4 * PG, PROT_READ | PROT_WRITE,
		     shared ? MAP_SHARED : MAP_PRIVATE, FZ_MiB);
	if (!p)
		return -errno;
	ret = fz_probe(p, 0);
	munmap(p, 4 * PG);
	return ret;
}

/*
 * A 5 MiB + 64 KiB object mapped at offset 2 MiB: the mapping runs 2 MiB
 * past the object's end.  Store page by page from 2 MiB into the mapping
 * (the object's 4..6 MiB, its last huge-page-sized range, which straddles
 * the end): the offset of the first page that signals, or -errno.
 */
static long o_shared_offset_tail(const char *path, int shared)
{
	const size_t len = 5 * FZ_MiB + 64 * FZ_KiB;
	unsigned char *p;
	size_t off;

	p = map_path(path, len, PROT_READ | PROT_WRITE,
		     shared ? MAP_SHARED : MAP_PRIVATE, 2 * FZ_MiB);
	if (!p)
		return -errno;
	for (off = 2 * FZ_MiB; off < len; off += PG)
		if (fz_probe(p + off, 1))
			break;
	munmap(p, len);
	return off;
}

/*
 * A 3 MiB + 64 KiB object, grown by mremap() to 4 MiB at a 2 MiB-aligned
 * address: the VMA now holds all of the object's 2..4 MiB range, which
 * straddles its end.  Store page by page from 2 MiB: the offset of the
 * first page that signals, or -errno.
 */
static long o_shared_grown_tail(const char *path, int shared)
{
	const size_t len = 3 * FZ_MiB + 64 * FZ_KiB, nlen = 4 * FZ_MiB;
	const size_t room = nlen + 2 * FZ_MiB;
	unsigned char *at, *p, *q;
	long ret;

	at = mmap(NULL, room, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		  MAP_NORESERVE, -1, 0);
	if (at == MAP_FAILED)
		return -errno;
	p = map_rw(path, len, shared);
	q = p ? mremap(p, len, nlen, MREMAP_MAYMOVE | MREMAP_FIXED,
		       at + (-(uintptr_t)at & (2 * FZ_MiB - 1))) : MAP_FAILED;
	if (q == MAP_FAILED) {
		ret = -errno;
		if (p)
			munmap(p, len);
	} else {
		for (ret = 2 * FZ_MiB; ret < (long)nlen; ret += PG)
			if (fz_probe(q + ret, 1))
				break;
	}
	munmap(at, room);	/* q lies inside */
	return ret;
}

static long o_zero_len(const char *path, int shared)
{
	return map_path(path, 0, PROT_READ, shared ? MAP_SHARED : MAP_PRIVATE,
			0) ? 0 : -errno;
}

static long o_unaligned_offset(const char *path, int shared)
{
	unsigned char *p = map_path(path, PG, PROT_READ,
				    shared ? MAP_SHARED : MAP_PRIVATE, 100);

	if (p)
		munmap(p, PG);
	return p ? 0 : -errno;
}

/* mmap() with a descriptor opened O_RDONLY / O_WRONLY. */
static long o_access_mode(const char *path, int accmode, int prot, int flags)
{
	int fd = open(path, accmode);
	void *p;
	long ret = 0;

	if (fd < 0)
		return -1000 - errno;
	p = mmap(NULL, PG, prot, flags, fd, 0);
	if (p == MAP_FAILED)
		ret = -errno;
	else
		munmap(p, PG);
	close(fd);
	return ret;
}

static long o_rdonly_shared_write(const char *path, int shared)
{
	(void)shared;
	return o_access_mode(path, O_RDONLY, PROT_READ | PROT_WRITE, MAP_SHARED);
}

static long o_rdonly_private_write(const char *path, int shared)
{
	(void)shared;
	return o_access_mode(path, O_RDONLY, PROT_READ | PROT_WRITE, MAP_PRIVATE);
}

static long o_wronly_shared_read(const char *path, int shared)
{
	(void)shared;
	return o_access_mode(path, O_WRONLY, PROT_READ, MAP_SHARED);
}

/*
 * MAP_SHARED of an O_RDONLY descriptor, at an offset: anonymous memory up
 * to 7.2 (no VM_SHARED), a shmem object from 7.3 (SIGBUS past its size).
 */
static long o_rdonly_shared_offset(const char *path, int shared)
{
	int fd = open(path, O_RDONLY);
	unsigned char *p;
	long ret;

	(void)shared;
	if (fd < 0)
		return -1000 - errno;
	p = mmap(NULL, 4 * PG, PROT_READ, MAP_SHARED, fd, FZ_MiB);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	ret = fz_probe(p, 0);
	munmap(p, 4 * PG);
	return ret;
}

static long o_exec(const char *path, int shared)
{
	return o_access_mode(path, O_RDWR, PROT_READ | PROT_EXEC,
			     shared ? MAP_SHARED : MAP_PRIVATE);
}

struct outcome_case {
	const char *name;
	long (*fn)(const char *path, int shared);
	int shared;
};

static const struct outcome_case outcome_cases[] = {
	{ "private_mremap_grow_new_part", o_mremap_grow_beyond, 0 },
	{ "shared_mremap_grow_beyond_original_size", o_mremap_grow_beyond, 1 },
	{ "shared_madv_dontneed_keeps_data", o_madv_dontneed, 1 },
	{ "shared_offset_1MiB", o_shared_offset, 1 },
	{ "shared_offset_2MiB_sigbus_from_object_end", o_shared_offset_tail, 1 },
	{ "shared_mremap_grown_over_2MiB_sigbus_from_object_end", o_shared_grown_tail, 1 },
	{ "private_zero_len_einval", o_zero_len, 0 },
	{ "shared_zero_len_einval", o_zero_len, 1 },
	{ "private_unaligned_offset", o_unaligned_offset, 0 },
	{ "rdonly_fd_shared_write", o_rdonly_shared_write, 1 },
	{ "rdonly_fd_private_write", o_rdonly_private_write, 0 },
	{ "wronly_fd_shared_read", o_wronly_shared_read, 1 },
	{ "rdonly_fd_shared_read_at_offset", o_rdonly_shared_offset, 1 },
	{ "private_prot_exec", o_exec, 0 },
	{ "shared_prot_exec", o_exec, 1 },
};

static int test_outcome(const void *arg, char *why)
{
	const struct outcome_case *c = arg;
	long rr = c->fn(fz_ref_path, c->shared);
	long dr = c->fn(fz_dev_path, c->shared);

	if (dr == rr)
		return FZ_PASS;
	return fz_fail(why, "%s gives %ld, %s gives %ld (0 = ok, >0 = signal, <0 = -errno)",
		       fz_dev_name, dr, fz_ref_name, rr);
}

#ifdef __x86_64__
/*
 * ---- placement for 32-bit callers (x86-64: arm64 has no 32-bit gate for
 * a 64-bit task) ----
 * The kernel never THP-aligns a mapping for a 32-bit or compat task
 * (4ef9ad19e176, CVE-2024-26621): in a 4 GiB address space the alignment
 * eats most of mmap's randomization.  A 64-bit process that enters through
 * int $0x80 makes compat system calls (in_compat_syscall()), with the
 * 32-bit layout, so mmap2 there must place the device's mapping exactly
 * where it places /dev/zero's, from the same free area.
 */

/* mmap2 through the 32-bit gate: the address, or -errno. */
static long mmap_compat(unsigned long len, int flags, int fd)
{
	long ret;

	/* below the red zone, and %ebp is mmap2's page offset: 0 */
	asm volatile("sub $128, %%rsp\n\t"
		     "push %%rbp\n\t"
		     "xor %%ebp, %%ebp\n\t"
		     "int $0x80\n\t"
		     "pop %%rbp\n\t"
		     "add $128, %%rsp"
		     : "=a" (ret)
		     : "a" (192L), "b" (0L), "c" (len), "d" ((long)(PROT_READ | PROT_WRITE)),
		       "S" ((long)flags), "D" ((long)fd)
		     : "memory", "cc", "r8", "r9", "r10", "r11");
	return (int)ret < 0 && (int)ret > -4096 ? (int)ret : ret;
}

/*
 * A kernel without 32-bit system calls (IA32_EMULATION off, or booted
 * ia32_emulation=false) answers int $0x80 with SIGSEGV, not -ENOSYS: try
 * it in a child first.
 */
static bool compat_syscalls_work(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		mmap_compat(0, MAP_PRIVATE | MAP_ANONYMOUS, -1);	/* -EINVAL */
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return true;	/* let the test itself say what is wrong */
	return !WIFSIGNALED(status);
}

struct compat_case {
	int flags;
	size_t len;
};

static int test_compat_placement(const void *arg, char *why)
{
	const struct compat_case *c = arg;
	long a_ref, a_dev;

	if (!compat_syscalls_work())
		return fz_skip(why, "no 32-bit system calls (int $0x80 raised SIGSEGV)");
	a_ref = mmap_compat(c->len, c->flags, ref);
	if (a_ref == -ENOSYS)
		return fz_skip(why, "no 32-bit system calls (IA32_EMULATION off)");
	if (a_ref < 0)
		return fz_fail(why, "compat mmap2 of %s: %s", fz_ref_name,
			       strerror(-a_ref));
	munmap((void *)a_ref, c->len);
	a_dev = mmap_compat(c->len, c->flags, dev);
	if (a_dev < 0)
		return fz_fail(why, "compat mmap2 of %s: %s", fz_dev_name,
			       strerror(-a_dev));
	munmap((void *)a_dev, c->len);
	if (a_dev != a_ref)
		return fz_fail(why, "placed at %#lx (%s 2 MiB-aligned), %s at %#lx",
			       a_dev, a_dev & (2 * FZ_MiB - 1) ? "not" : "",
			       fz_ref_name, a_ref);
	return FZ_PASS;
}

static const struct compat_case compat_cases[] = {
	{ MAP_PRIVATE, 2 * FZ_MiB },
	{ MAP_PRIVATE, 64 * FZ_MiB },
	{ MAP_SHARED, 4 * FZ_MiB },
};
#endif

/*
 * ---- placement of consecutive mappings ----
 * Three 4 MiB mappings in a row, then unmapped: the gaps between them
 * must be the reference's (none: consecutive MAP_ANONYMOUS mappings abut,
 * THP-aligned or not, and so do /dev/zero's).  fastzero aligns these to
 * 2 MiB, and a placement that rounds a padded search up leaves 2 MiB
 * unmapped above each.
 */

#define ROW		3
#define ROW_LEN		(4 * FZ_MiB)

struct row_case {
	int shared;
	const char *ref;	/* NULL: MAP_ANONYMOUS */
};

/* Map ROW mappings of @fd (-1: anonymous) and store the gaps between them. */
static int map_row(int fd, int shared, long gap[ROW - 1], char *why)
{
	int flags = (shared ? MAP_SHARED : MAP_PRIVATE) | (fd < 0 ? MAP_ANONYMOUS : 0);
	unsigned char *p[ROW];
	int i, n, ret = FZ_PASS;

	for (n = 0; n < ROW; n++) {
		p[n] = mmap(NULL, ROW_LEN, PROT_READ | PROT_WRITE, flags, fd, 0);
		if (p[n] == MAP_FAILED) {
			ret = fz_fail(why, "mmap %d: %s", n, strerror(errno));
			break;
		}
	}
	for (i = 0; ret == FZ_PASS && i < ROW - 1; i++) {
		uintptr_t a = (uintptr_t)p[i], b = (uintptr_t)p[i + 1];

		gap[i] = (long)(a > b ? a - (b + ROW_LEN) : b - (a + ROW_LEN));
	}
	while (n--)
		munmap(p[n], ROW_LEN);
	return ret;
}

static int test_row(const void *arg, char *why)
{
	const struct row_case *c = arg;
	long gref[ROW - 1], gdev[ROW - 1];
	int i, ret;

	ret = map_row(c->ref ? ref : -1, c->shared, gref, why);
	if (ret)
		return ret;
	ret = map_row(dev, c->shared, gdev, why);
	if (ret)
		return ret;
	fz_diag("gaps in KiB: %s %ld %ld, %s %ld %ld", fz_dev_name,
		gdev[0] / 1024, gdev[1] / 1024, c->ref ? fz_ref_name : "MAP_ANONYMOUS",
		gref[0] / 1024, gref[1] / 1024);
	for (i = 0; i < ROW - 1; i++)
		if (gdev[i] != gref[i])
			return fz_fail(why, "mapping %d is %ld KiB from the next, %s's %ld KiB",
				       i, gdev[i] / 1024,
				       c->ref ? fz_ref_name : "MAP_ANONYMOUS", gref[i] / 1024);
	return FZ_PASS;
}

static const struct row_case row_cases[] = {
	{ 0, NULL },
	{ 0, "ref" },
	{ 1, "ref" },
};

/*
 * ---- rmmod while mapped ----
 * A private mapping is anonymous memory in a VMA that holds the device's
 * file, so it pins the module as /dev/zero's pins mem.c.  (A shared one
 * holds only its shmem file: t_unload unloads the module under one.)
 */

static int test_rmmod_mapped(const void *arg, char *why)
{
	unsigned char *p;
	int ret = FZ_PASS;

	(void)arg;
	if (!fz_module)
		return fz_skip(why, "module tests disabled (FZ_MODULE=0)");
	close(dev);	/* only the mapping holds the module now */
	p = map_rw(fz_dev_path, 4 * PG, 0);
	if (!p)
		ret = fz_fail(why, "mmap: %s", strerror(errno));
	else if (fz_delete_module("fastzero", O_NONBLOCK) == 0)
		ret = fz_fail(why, "delete_module succeeded while mapped");
	else if (errno != EBUSY && errno != EAGAIN)
		ret = fz_fail(why, "delete_module: %s, expected EBUSY or EAGAIN",
			      strerrorname_np(errno));
	if (p) {
		p[0] = 1;	/* still usable */
		munmap(p, 4 * PG);
	}
	dev = open(fz_dev_path, O_RDWR);
	return ret;
}

int main(int argc, char **argv)
{
	size_t i;

	fz_setup(argc, argv, &dev, &ref);

	for (i = 0; i < FZ_ARRAY_SIZE(map_cases); i++)
		fz_run(test_map_case, &map_cases[i], "mmap_%s", map_cases[i].name);
	for (i = 0; i < FZ_ARRAY_SIZE(outcome_cases); i++)
		fz_run(test_outcome, &outcome_cases[i], "mmap_%s",
		       outcome_cases[i].name);
#ifdef __x86_64__
	for (i = 0; i < FZ_ARRAY_SIZE(compat_cases); i++)
		fz_run(test_compat_placement, &compat_cases[i],
		       "compat_mmap2_%s_%zuMiB_placed_as_dev_zero",
		       compat_cases[i].flags == MAP_SHARED ? "shared" : "private",
		       compat_cases[i].len / FZ_MiB);
#endif
	for (i = 0; i < FZ_ARRAY_SIZE(row_cases); i++)
		fz_run(test_row, &row_cases[i], "three_4MiB_%s_mappings_abut_as_%s",
		       row_cases[i].shared ? "shared" : "private",
		       row_cases[i].ref ? "dev_zero" : "map_anonymous");
	fz_run(test_rmmod_mapped, NULL, "rmmod_refused_while_private_mapped_after_close");

	return fz_exit();
}
