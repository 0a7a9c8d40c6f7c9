// SPDX-License-Identifier: GPL-2.0
/*
 * t_clear - shared_clear=driver: shared huge pages cleared once by the driver, never an uncleared byte.
 *
 * Loads the module with shared_clear=driver (6.12+; 6.1 must refuse it),
 * then: first touch by read, by write and by MAP_POPULATE, after another
 * process filled and freed memory with a pattern, with racing threads on
 * one PMD, racing MADV_REMOVE, with huge allocations failing (the 4 KiB fallback; fault
 * injection), around MADV_REMOVE, across fork and mremap, reads zeros exactly
 * where /dev/zero's do, one fault per 2 MiB, and the module stays loaded
 * while such a mapping exists.  Boot with init_on_alloc=0 page_poison=1 to
 * make any page that escaped the clear read as poison.  Then each
 * shared_huge policy under each shared_clear maps MADV_HUGEPAGE memory
 * with PMDs, or (advise with driver) is refused.  Reloads the module
 * as the harness had it at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fztest.h"

#define PMD_LEN		(2 * FZ_MiB)
#define NTHREADS	8
#define PATTERN		0x5a
#define STATS		"/sys/class/misc/fastzero/stats/"

static int dev, ref;
static size_t map_len = 256 * FZ_MiB;

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Pages the driver cleared, plus those the allocator had cleared for it. */
static long driver_pages(void)
{
	return fz_file_long(STATS "shared_clear_pages", NULL) +
	       fz_file_long(STATS "shared_preclear_pages", NULL);
}

static unsigned char *map_shared(int fd, size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | flags,
		       fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Another process fills @len bytes of new memory with PATTERN and exits. */
static void dirty_child(void *arg)
{
	size_t len = *(size_t *)arg;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(1);
	memset(p, PATTERN, len);
	_exit(0);
}

static int dirty_memory(size_t len, char *why)
{
	int st = fz_in_child(dirty_child, &len);

	return st ? fz_fail(why, "the dirtying child failed (%d)", st) : FZ_PASS;
}

/* How: 0 read each page, 1 write each page, 2 MAP_POPULATE. */
static int first_touch(int how, size_t len, char *why)
{
	long f0, faults, d0 = driver_pages(), done;
	unsigned char *p;
	size_t i;
	int ret;

	ret = dirty_memory(len, why);
	if (ret)
		return ret;
	f0 = minflt();
	p = map_shared(dev, len, how == 2 ? MAP_POPULATE : 0);
	if (!p)
		return fz_fail(why, "mmap %zu: %s", len, strerror(errno));
	for (i = 0; how != 2 && i < len; i += fz_page) {
		if (how == 1)
			p[i + 7] = 0;
		else if (p[i + 7])
			break;
	}
	faults = minflt() - f0;
	done = driver_pages() - d0;
	ret = check_zero(p, len, why);
	munmap(p, len);
	if (ret)
		return ret;
	if (done != (long)(len / fz_page))
		return fz_fail(why, "the driver cleared %ld pages of %zu (shmem cleared the rest)",
			       done, len / fz_page);
	if (how != 2 && faults > (long)(len / PMD_LEN) + 16)
		return fz_fail(why, "%ld faults for %zu huge pages", faults, len / PMD_LEN);
	fz_diag("%ld faults; %ld pages cleared by the driver, %ld by the allocator",
		faults, fz_file_long(STATS "shared_clear_pages", NULL),
		fz_file_long(STATS "shared_preclear_pages", NULL));
	return FZ_PASS;
}

static int test_first_touch(const void *arg, char *why)
{
	return first_touch(*(const int *)arg, map_len, why);
}

struct racer {
	pthread_barrier_t *go;
	unsigned char *map;
	int id;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	size_t i;

	pthread_barrier_wait(r->go);
	for (i = 0; i < PMD_LEN; i += fz_page) {
		size_t pg = (i + r->id * 4096 * 61) % PMD_LEN;

		if (r->map[pg + r->id])
			return r;
	}
	return NULL;
}

/* Eight threads first-touch the same huge pages at once: zeros, one page each. */
static int test_racing_threads(const void *arg, char *why)
{
	struct racer r[NTHREADS];
	pthread_t tid[NTHREADS];
	pthread_barrier_t go;
	int i, round, ret = FZ_PASS;
	void *res;

	(void)arg;
	for (round = 0; round < 16 && ret == FZ_PASS; round++) {
		unsigned char *p = map_shared(dev, PMD_LEN * 4, 0);

		if (!p)
			return fz_fail(why, "mmap: %s", strerror(errno));
		pthread_barrier_init(&go, NULL, NTHREADS);
		for (i = 0; i < NTHREADS; i++) {
			r[i] = (struct racer){ &go, p + (i % 4) * PMD_LEN, i };
			pthread_create(&tid[i], NULL, racer_main, &r[i]);
		}
		for (i = 0; i < NTHREADS; i++) {
			pthread_join(tid[i], &res);
			if (res)
				ret = fz_fail(why, "thread %d saw a non-zero byte in round %d",
					      i, round);
		}
		pthread_barrier_destroy(&go);
		if (ret == FZ_PASS)
			ret = check_zero(p, PMD_LEN * 4, why);
		munmap(p, PMD_LEN * 4);
	}
	return ret;
}

struct puncher {
	unsigned char *map;
	size_t len;
	volatile int stop;
	long punches;
};

/* Punch random 4 KiB..2 MiB holes (MADV_REMOVE) until told to stop. */
static void *puncher_main(void *arg)
{
	struct puncher *pu = arg;
	unsigned int seed = 1;

	while (!pu->stop) {
		size_t len = (rand_r(&seed) & 1) ? PMD_LEN : fz_page;
		size_t off = (rand_r(&seed) % (pu->len / len)) * len;

		if (madvise(pu->map + off, len, MADV_REMOVE))
			return pu;
		pu->punches++;
	}
	return NULL;
}

/*
 * Readers first-touch pages while a thread punches holes under them: every
 * refault allocates and clears again, racing the punch; no one writes, so
 * every byte read must be zero.
 */
static int test_racing_punch(const void *arg, char *why)
{
	size_t len = 8 * PMD_LEN, i, round;
	struct puncher pu = { .len = len };
	unsigned char *p = map_shared(dev, len, 0);
	pthread_t tid;
	void *res;
	int ret = FZ_PASS;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	pu.map = p;
	pthread_create(&tid, NULL, puncher_main, &pu);
	for (round = 0; round < (fz_quick ? 20 : 100) && ret == FZ_PASS; round++)
		for (i = 0; i < len; i += 512)
			if (p[i]) {
				ret = fz_fail(why, "byte %zu is %#x in round %zu", i, p[i], round);
				break;
			}
	pu.stop = 1;
	pthread_join(tid, &res);
	if (ret == FZ_PASS && res)
		ret = fz_fail(why, "MADV_REMOVE: %s", strerror(errno));
	if (ret == FZ_PASS)
		fz_diag("%ld holes punched under the readers", pu.punches);
	munmap(p, len);
	return ret;
}

/*
 * Write a pattern, punch 2 MiB + 4 KiB out of it with MADV_REMOVE, and
 * touch it again: both devices must read the same bytes.
 */
static int test_madv_remove(const void *arg, char *why)
{
	size_t len = 8 * PMD_LEN, off = PMD_LEN + 4096, cut = PMD_LEN + 4096;
	unsigned char *a = map_shared(dev, len, 0), *b = map_shared(ref, len, 0);
	int ret = FZ_PASS;
	size_t i;

	(void)arg;
	if (!a || !b) {
		ret = fz_fail(why, "mmap: %s", strerror(errno));
		goto out;
	}
	memset(a, PATTERN, len);
	memset(b, PATTERN, len);
	if (madvise(a + off, cut, MADV_REMOVE) || madvise(b + off, cut, MADV_REMOVE)) {
		ret = fz_fail(why, "MADV_REMOVE: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < len; i++) {
		if (a[i] != b[i]) {
			ret = fz_fail(why, "byte %zu is %#x, /dev/zero's %#x", i, a[i], b[i]);
			break;
		}
	}
out:
	if (a)
		munmap(a, len);
	if (b)
		munmap(b, len);
	return ret;
}

/* A child's writes are the parent's: fork shares the object. */
static int test_fork_shares(const void *arg, char *why)
{
	unsigned char *p = map_shared(dev, 2 * PMD_LEN, 0);
	pid_t pid;
	int st, ret;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	p[0] = 1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		_exit(p[0] != 1 || p[PMD_LEN + 5] ? 1 : (p[PMD_LEN + 5] = 2, 0));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st)
		ret = fz_fail(why, "the child saw other data (status %#x)", st);
	else if (p[PMD_LEN + 5] != 2)
		ret = fz_fail(why, "the child's write is not in the parent's mapping");
	else
		ret = check_zero(p + PMD_LEN + 6, PMD_LEN - 6, why);
	munmap(p, 2 * PMD_LEN);
	return ret;
}

/* Grown by mremap: SIGBUS from the object's end, as /dev/zero's. */
static int test_mremap_grown(const void *arg, char *why)
{
	size_t len = 2 * PMD_LEN, big = 4 * PMD_LEN;
	unsigned char *p = map_shared(dev, len, 0), *q;
	int ret;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	q = mremap(p, len, big, MREMAP_MAYMOVE);
	if (q == MAP_FAILED) {
		munmap(p, len);
		return fz_fail(why, "mremap: %s", strerror(errno));
	}
	ret = check_zero(q, len, why);
	if (ret == FZ_PASS && fz_probe(q + len, 0) == 0)
		ret = fz_fail(why, "a load at the object's end gave no signal");
	munmap(q, big);
	return ret;
}

/*
 * remap_file_pages() of the first page to the object's second, then a
 * fault in it: the kernel emulates the call with do_mmap() of the VMA's
 * file, which in driver mode is fastzero's own (fz_shared_file()).
 */
static int remap_first(int fd, unsigned char *out, char *why)
{
	size_t len = PMD_LEN;
	unsigned char *p = map_shared(fd, len, 0);
	int ret = FZ_PASS;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	p[0] = 1;
	p[fz_page] = 2;
	if (remap_file_pages(p, fz_page, 0, 1, 0))
		ret = -errno;
	else
		*out = p[0];
	munmap(p, len);
	return ret;
}

static int test_remap_pages(const void *arg, char *why)
{
	unsigned char a = 0, b = 0;
	int ra, rb;

	(void)arg;
	rb = remap_first(ref, &b, why);
	if (rb == FZ_FAIL)
		return rb;
	if (rb == -ENOSYS)
		return fz_skip(why, "kernel without remap_file_pages()");
	ra = remap_first(dev, &a, why);
	if (ra == FZ_FAIL)
		return ra;
	if (ra != rb)
		return fz_fail(why, "returned %s, %s's %s", ra ? strerror(-ra) : "success",
			       fz_ref_name, rb ? strerror(-rb) : "success");
	if (a != b)
		return fz_fail(why, "the remapped page holds %u, %s's %u", a, fz_ref_name, b);
	return FZ_PASS;
}

#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC	(1 << 15)	/* 6.7+ uapi */
#endif

/*
 * A userfaultfd registered WP-only with UFFD_FEATURE_WP_ASYNC on
 * [p, p + len), the range write-protected, then a write to every other
 * page (resolved by the kernel, no handler): 0, or -errno of the step that
 * failed; -ENOPROTOOPT when the kernel has no WP_ASYNC (UFFDIO_API).
 */
static int uffd_wp_async(unsigned char *p, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
	struct uffdio_register reg = {
		.range = { (unsigned long)p, len }, .mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { (unsigned long)p, len }, .mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK), ret = 0;
	size_t i;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api))
		ret = errno == EINVAL ? -ENOPROTOOPT : -errno;
	else if (ioctl(fd, UFFDIO_REGISTER, &reg) || ioctl(fd, UFFDIO_WRITEPROTECT, &wp))
		ret = -errno;
	for (i = 0; !ret && i < len; i += 2 * fz_page)
		p[i] = PATTERN;
	close(fd);
	return ret;
}

/*
 * userfaultfd WP-only with UFFD_FEATURE_WP_ASYNC takes any memory type
 * (vma_can_userfault(): 6.12 userfaultfd_k.h, 7.x mm/userfaultfd.c), so
 * a driver-mode mapping is accepted as /dev/zero's is; while registered
 * the VMA is userfaultfd_armed() and the driver leaves every fault to
 * shmem (which clears the pages): the same bytes, no page cleared by the
 * driver.
 */
static int test_uffd_wp_async(const void *arg, char *why)
{
	size_t len = 2 * PMD_LEN, i;
	unsigned char *a = map_shared(dev, len, 0), *b = map_shared(ref, len, 0);
	long d0 = driver_pages();
	int ra, rb, ret = FZ_PASS;

	(void)arg;
	if (!a || !b) {
		ret = fz_fail(why, "mmap: %s", strerror(errno));
		goto out;
	}
	rb = uffd_wp_async(b, len);
	if (rb == -ENOSYS || rb == -ENOPROTOOPT) {
		ret = fz_skip(why, "kernel without %s", rb == -ENOSYS ? "userfaultfd" : "UFFD_FEATURE_WP_ASYNC");
		goto out;
	}
	ra = uffd_wp_async(a, len);
	if (ra != rb) {
		ret = fz_fail(why, "returned %s, %s's %s", ra ? strerror(-ra) : "success",
			      fz_ref_name, rb ? strerror(-rb) : "success");
		goto out;
	}
	for (i = 0; i < len; i++)
		if (a[i] != b[i]) {
			ret = fz_fail(why, "byte %zu is %#x, %s's %#x", i, a[i], fz_ref_name, b[i]);
			goto out;
		}
	fz_diag("registration %s on both; %ld pages cleared by the driver meanwhile",
		ra ? strerror(-ra) : "accepted", driver_pages() - d0);
	if (driver_pages() != d0)
		ret = fz_fail(why, "the driver cleared %ld pages of a registered range",
			      driver_pages() - d0);
out:
	if (a)
		munmap(a, len);
	if (b)
		munmap(b, len);
	return ret;
}

/* ftruncate() to 2 MiB through map_files, then the byte at 3 MiB: 0 or the signal. */
static int truncated_probe(int fd, int *sig, char *why)
{
	size_t len = 2 * PMD_LEN;
	unsigned char *p = map_shared(fd, len, 0);
	char path[96];
	int f, ret = FZ_PASS;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	p[0] = 1;
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)p, (unsigned long)(p + len));
	f = open(path, O_RDWR);
	if (f < 0 || ftruncate(f, PMD_LEN))
		ret = fz_fail(why, "%s: %s", path, strerror(errno));
	if (f >= 0)
		close(f);
	*sig = ret ? 0 : fz_probe(p + PMD_LEN + PMD_LEN / 2, 0);
	if (!ret && (p[0] != 1 || check_zero(p + 1, PMD_LEN - 1, why)))
		ret = fz_fail(why, "the first 2 MiB changed");
	munmap(p, len);
	return ret;
}

/*
 * Root truncates the object through /proc/PID/map_files: a fault past the
 * new end gets SIGBUS, the rest keeps its data, as with /dev/zero (the
 * driver's fill checks i_size before it allocates; see the README for a
 * truncate that races it).
 */
static int test_truncate_map_files(const void *arg, char *why)
{
	int sa, sb, ret;

	(void)arg;
	ret = fz_need_root(why);
	if (!ret)
		ret = truncated_probe(ref, &sb, why);
	if (!ret)
		ret = truncated_probe(dev, &sa, why);
	if (ret)
		return ret;
	if (sa != sb)
		return fz_fail(why, "a load past the new end gave signal %d, %s's %d",
			       sa, fz_ref_name, sb);
	return FZ_PASS;
}

/*
 * The VMAs of /proc/self/maps inside [p, p + len): their number, and the
 * name of the first in @name.
 */
static int count_vmas(const void *p, size_t len, char *name, size_t nlen)
{
	unsigned long lo = (unsigned long)p, hi = lo + len, a, b;
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255[^\n]", &a, &b, path) < 2)
			continue;
		if (b <= lo || a >= hi)
			continue;
		if (!n++ && name)
			snprintf(name, nlen, "%s", path);
	}
	fclose(f);
	return n;
}

/*
 * Split a 4 MiB mapping with mprotect() of one page and join it again;
 * how many VMAs are left, and what a following mremap() to 8 MiB
 * (MREMAP_MAYMOVE) returns.  /dev/zero's merges back into one VMA, which
 * grows; a VMA with vm_ops->close never merges (can_merge_remove_vma()),
 * and mremap() then fails over three VMAs.
 */
static int split_join(int fd, int *vmas, int *remap_err, char *name, size_t nlen)
{
	size_t len = 2 * PMD_LEN;
	unsigned char *p = map_shared(fd, len, 0), *q;

	if (!p)
		return -errno;
	p[0] = 1;
	if (mprotect(p + PMD_LEN, fz_page, PROT_READ) ||
	    mprotect(p + PMD_LEN, fz_page, PROT_READ | PROT_WRITE)) {
		munmap(p, len);
		return -errno;
	}
	*vmas = count_vmas(p, len, name, nlen);
	q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
	*remap_err = q == MAP_FAILED ? errno : 0;
	if (q == MAP_FAILED) {
		munmap(p, len);
	} else {
		*remap_err = q[0] == 1 ? 0 : -1;
		munmap(q, 2 * len);
	}
	return 0;
}

/* What split_join() measures, on both devices; @arg: 0 VMAs, 1 mremap, 2 name. */
static int test_split_join(const void *arg, char *why)
{
	int what = *(const int *)arg, va, vb, ra, rb, err;
	char na[256] = "", nb[256] = "";

	err = split_join(ref, &vb, &rb, nb, sizeof(nb));
	if (err)
		return fz_fail(why, "%s: mmap/mprotect: %s", fz_ref_name, strerror(-err));
	err = split_join(dev, &va, &ra, na, sizeof(na));
	if (err)
		return fz_fail(why, "%s: mmap/mprotect: %s", fz_dev_name, strerror(-err));
	fz_diag("after the split and join: %s %d VMAs (\"%s\"), mremap %s; %s %d (\"%s\"), mremap %s",
		fz_dev_name, va, na, ra ? strerror(ra) : "ok", fz_ref_name, vb, nb,
		rb ? strerror(rb) : "ok");
	if (what == 0 && va != vb)
		return fz_fail(why, "%d VMAs, %s's %d", va, fz_ref_name, vb);
	if (what == 1 && ra != rb)
		return fz_fail(why, "mremap to 8 MiB: %s, %s's %s",
			       ra > 0 ? strerror(ra) : ra ? "data lost" : "success",
			       fz_ref_name, rb ? strerror(rb) : "success");
	if (what == 2 && strcmp(na, "/dev/fastzero (deleted)"))
		return fz_fail(why, "/proc/self/maps names it \"%s\"", na);
	return FZ_PASS;
}

/* The module cannot go while a driver-mode mapping holds its vm_ops. */
static int test_module_pinned(const void *arg, char *why)
{
	unsigned char *p = map_shared(dev, PMD_LEN, 0);
	int busy;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	p[0] = 1;
	busy = fz_delete_module("fastzero", O_NONBLOCK) ? errno : 0;
	munmap(p, PMD_LEN);
	if (!busy) {
		fz_load_module("shared_clear=driver");
		return fz_fail(why, "delete_module succeeded with a mapping alive");
	}
	if (busy != EWOULDBLOCK && busy != EBUSY)
		return fz_fail(why, "delete_module: %s", strerror(busy));
	return FZ_PASS;
}

/* delete_module refused: 0; else a reason in @why and FZ_FAIL. */
static int still_pinned(const char *when, char *why)
{
	if (!fz_delete_module("fastzero", O_NONBLOCK)) {
		fz_load_module("shared_clear=driver");
		return fz_fail(why, "delete_module succeeded %s", when);
	}
	if (errno != EWOULDBLOCK && errno != EBUSY)
		return fz_fail(why, "delete_module %s: %s", when, strerror(errno));
	return 0;
}

/*
 * The module stays while any piece of a driver-mode mapping exists: the
 * last page of a split one after the rest is unmapped, then a child's
 * copy after the parent unmapped its own; it unloads once all are gone.
 * Reloads it with shared_clear=driver.
 */
static int test_pinned_by_pieces(const void *arg, char *why)
{
	size_t len = 2 * PMD_LEN;
	unsigned char *p = map_shared(dev, len, 0);
	int go[2], st, ret;
	pid_t pid;
	char c;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	close(dev);
	dev = -1;
	p[0] = 1;
	ret = mprotect(p + PMD_LEN, fz_page, PROT_READ) ? fz_fail(why, "mprotect: %s", strerror(errno)) :
	      munmap(p, len - fz_page) ? fz_fail(why, "munmap: %s", strerror(errno)) :
	      still_pinned("with one page of a split mapping left", why);
	if (ret || pipe(go)) {
		munmap(p + len - fz_page, fz_page);
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		_exit(read(go[0], &c, 1) < 0 || p[len - fz_page] ? 1 : 0);
	}
	munmap(p + len - fz_page, fz_page);
	close(go[0]);
	if (pid < 0)
		ret = fz_fail(why, "fork: %s", strerror(errno));
	else
		ret = still_pinned("with only a child's copy of the mapping", why);
	close(go[1]);
	if (pid > 0 && (waitpid(pid, &st, 0) != pid || st) && !ret)
		ret = fz_fail(why, "the child read other data (status %#x)", st);
	if (!ret && fz_delete_module("fastzero", O_NONBLOCK))
		ret = fz_fail(why, "delete_module after the last piece went: %s", strerror(errno));
out:
	st = fz_load_module("shared_clear=driver");
	if (st && st != -EEXIST && !ret)
		ret = fz_fail(why, "reload: %s", strerror(-st));
	dev = open(fz_dev_path, O_RDWR);
	return ret;
}

#define FPA	"/sys/kernel/debug/fail_page_alloc/"

/* How the child of test_order0_fallback() ended: its exit code. */
enum fallback_end {
	FALLBACK_OK,
	FALLBACK_FEW_FAULTS,
	FALLBACK_NO_MARK,
	FALLBACK_NONZERO,
};

/* Marked to fail order >= 1, first-touch every page of the 4 MiB @arg. */
static void fallback_child(void *arg)
{
	unsigned char *p = arg;
	size_t len = 2 * PMD_LEN, i;
	long f0 = minflt();

	if (fz_write_file("/proc/self/make-it-fail", "1"))
		_exit(FALLBACK_NO_MARK);
	for (i = 0; i < len; i += fz_page)
		if (p[i + 9])
			_exit(FALLBACK_NONZERO);
	_exit(minflt() - f0 < (long)(len / fz_page) / 2 ? FALLBACK_FEW_FAULTS : FALLBACK_OK);
}

/*
 * Under memory pressure shmem falls back to 4 KiB pages: fail every
 * page allocation above order 0 for one task (fail_page_alloc,
 * Documentation/fault-injection/fault-injection.rst), then first-touch
 * 4 MiB: zeros, a fault per page, each page cleared by the driver or the
 * allocator.  Not min-order 9: on 7.x a tmpfs mounted huge=always "will
 * always try PMD-sized order first.  If that failed, it will fall back to
 * small large folios" (shmem_huge_global_enabled(), not in 6.12), and 7.2
 * answered a refused order 9 with 1 MiB folios, one fault each.  The task
 * that fails its allocations is a child that touches the pages and exits:
 * under KASAN slab caches take order-1 and larger slabs, so even the
 * open() that would clear make-it-fail again can fail, and the suite
 * itself must never be the marked task.  Kernels without fault injection
 * skip.
 */
static int test_order0_fallback(const void *arg, char *why)
{
	static const char *const set[][2] = {
		{ "task-filter", "Y" }, { "probability", "100" },
		{ "interval", "1" }, { "times", "-1" }, { "space", "0" },
		{ "verbose", "0" }, { "min-order", "1" },
		{ "ignore-gfp-wait", "N" }, { "ignore-gfp-highmem", "N" },
	};
	char old[FZ_ARRAY_SIZE(set)][32], path[128];
	size_t len = 2 * PMD_LEN, pages = len / fz_page, n;
	long d0, done;
	unsigned char *p;
	int ret, st;

	(void)arg;
	if (access(FPA "min-order", W_OK))
		return fz_skip(why, "kernel without fail_page_alloc (the debug kernel has it)");
	for (n = 0; n < FZ_ARRAY_SIZE(set); n++) {
		snprintf(path, sizeof(path), FPA "%s", set[n][0]);
		if (fz_read_file(path, old[n], sizeof(old[n])) ||
		    fz_write_file(path, set[n][1])) {
			ret = fz_fail(why, "setting %s: %s", path, strerror(errno));
			goto restore;
		}
	}
	p = map_shared(dev, len, 0);
	if (!p) {
		ret = fz_fail(why, "mmap: %s", strerror(errno));
		goto restore;
	}
	d0 = driver_pages();
	st = fz_in_child(fallback_child, p);
	if (st == 256 + FALLBACK_NO_MARK)
		ret = fz_fail(why, "make-it-fail could not be set in the child");
	else if (st == 256 + FALLBACK_NONZERO)
		ret = fz_fail(why, "a first touch read a non-zero byte");
	else if (st == 256 + FALLBACK_FEW_FAULTS)
		ret = fz_fail(why, "fewer than %zu faults for %zu pages: huge pages were not refused",
			      pages / 2, pages);
	else if (st)
		ret = fz_fail(why, "the child touching the pages failed (%d)", st);
	else
		ret = check_zero(p, len, why);
	done = driver_pages() - d0;
	munmap(p, len);
	if (ret == FZ_PASS && done != (long)pages)
		ret = fz_fail(why, "the driver cleared %ld of %zu 4 KiB pages", done, pages);
restore:
	while (n--) {
		snprintf(path, sizeof(path), FPA "%s", set[n][0]);
		fz_write_file(path, old[n]);
	}
	return ret;
}

/* UFFDIO_REGISTER of a mapping for missing faults: 0 or -errno. */
static int uffd_register(void *p, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { (unsigned long)p, len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg))
		ret = -errno;
	close(fd);
	return ret;
}

/* PR_SET_VMA_ANON_NAME on a mapping: 0 or -errno. */
static int anon_name(void *p, size_t len)
{
	return prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, len,
		     (unsigned long)"fz") ? -errno : 0;
}

/*
 * mremap() moving a range of three VMAs (a read-only page in the middle)
 * in one call: 7.x does it for shmem's VMAs (vma_multi_allowed() in
 * mm/mremap.c), 6.12 refuses it for every mapping with EFAULT.
 */
static int multi_vma_move(void *p, size_t len)
{
	void *t = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int ret = 0;

	if (t == MAP_FAILED)
		return -errno;
	if (mprotect((char *)p + len / 2, fz_page, PROT_READ) ||
	    mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, t) == MAP_FAILED)
		ret = -errno;
	munmap(t, len);	/* the moved range, or the unused reservation */
	return ret;
}

/*
 * What the mode gives up, as the README says: with fastzero's vm_ops the
 * VMA is not shmem to the kernel, so userfaultfd registration fails with
 * EINVAL, naming it with EBADF and moving several of its VMAs at once with
 * EFAULT, where /dev/zero's mapping takes all three.
 * /dev/zero's mapping refused with @absent (ENOSYS: no CONFIG_USERFAULTFD;
 * EINVAL: no CONFIG_ANON_VMA_NAME; EFAULT: before 7.x) means the kernel
 * lacks the feature; refused with anything else, the test could not run.
 */
struct gives_up {
	int (*op)(void *p, size_t len);
	int want, absent;
};

static int test_gives_up(const void *arg, char *why)
{
	const struct gives_up *g = arg;
	unsigned char *a = map_shared(dev, PMD_LEN, 0), *b = map_shared(ref, PMD_LEN, 0);
	int ra, rb, ret = FZ_PASS;

	if (!a || !b) {
		ret = fz_fail(why, "mmap: %s", strerror(errno));
		goto out;
	}
	rb = g->op(b, PMD_LEN);
	ra = g->op(a, PMD_LEN);
	if (rb == g->absent)
		ret = fz_skip(why, "refused for /dev/zero's mapping too: %s", strerror(-rb));
	else if (rb)
		ret = fz_fail(why, "/dev/zero's mapping refused it: %s", strerror(-rb));
	else if (ra != g->want)
		ret = fz_fail(why, "returned %s, the README says %s",
			      ra ? strerror(-ra) : "success", strerror(-g->want));
out:
	if (a)
		munmap(a, PMD_LEN);
	if (b)
		munmap(b, PMD_LEN);
	return ret;
}

/* Back to the module as the boot loaded it, for the programs after this. */
static void restore(void)
{
	int err = fz_reload_module("", NULL);

	if (err)
		fz_report(FZ_FAIL, "module_restored", strerror(-err));
}

/*
 * Each shared_huge policy that gives huge pages, under each shared_clear:
 * a MADV_HUGEPAGE mapping of 8 MiB, every page touched, is mapped with
 * PMDs (ShmemPmdMapped in smaps), as shmem's own fault maps it.  Except
 * advise with driver, which must be refused at load with EINVAL:
 * shmem_get_folio() passes shmem no VMA, so under huge=advise the driver's
 * allocations never saw MADV_HUGEPAGE and took 4 KiB pages.  Runs with the
 * module reloaded; the caller restores it.
 */
struct huge_pair {
	const char *huge, *clear;
};

static int test_huge_pair(const void *arg, char *why)
{
	const struct huge_pair *h = arg;
	int refuse = !strcmp(h->huge, "advise") && !strcmp(h->clear, "driver");
	size_t len = 4 * PMD_LEN, i;
	char params[96];
	unsigned char *p;
	long kb;
	int fd, err;

	snprintf(params, sizeof(params), "shared_huge=%s shared_clear=%s", h->huge, h->clear);
	err = fz_reload_module(params, NULL);
	if (refuse)
		return err == -EINVAL ? FZ_PASS :
		       fz_fail(why, "%s loaded: %s", params, err ? strerror(-err) : "success");
	if (err)
		return fz_fail(why, "loading %s: %s", params, strerror(-err));
	fd = open(fz_dev_path, O_RDWR);
	if (fd < 0)
		return fz_fail(why, "open: %s", strerror(errno));
	p = map_shared(fd, len, 0);
	close(fd);
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (madvise(p, len, MADV_HUGEPAGE)) {
		munmap(p, len);
		return fz_fail(why, "MADV_HUGEPAGE: %s", strerror(errno));
	}
	for (i = 0; i < len; i += fz_page)
		p[i] = 1;
	kb = fz_smaps_kb(p, len, "ShmemPmdMapped:");
	munmap(p, len);
	fz_diag("%s: ShmemPmdMapped %ld kB of %zu", params, kb, len / FZ_KiB);
	/* one huge page may be missing: the allocator may have none at hand */
	if (kb < (long)((len - PMD_LEN) / FZ_KiB))
		return fz_fail(why, "%ld kB of %zu kB mapped by PMDs", kb, len / FZ_KiB);
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	static const int how[] = { 0, 1, 2 };
	static const struct gives_up gives_up[] = {
		{ uffd_register, -EINVAL, -ENOSYS },
		{ anon_name, -EBADF, -EINVAL },
		{ multi_vma_move, -EFAULT, -EFAULT },
	};
	static const struct huge_pair pairs[] = {
		{ "within_size", "shmem" }, { "within_size", "driver" },
		{ "always", "shmem" }, { "always", "driver" },
		{ "advise", "shmem" }, { "advise", "driver" },
	};
	char mode[32] = "";
	int err;
	size_t i;

	fz_setup(argc, argv, &dev, &ref);
	if (!fz_module) {
		fz_report(FZ_SKIP, "shared_clear", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
	if (fz_quick)
		map_len = 64 * FZ_MiB;
	if (fz_read_file(FZ_PARAMS "/shared_clear", mode, sizeof(mode)) == 0 &&
	    strcmp(mode, "driver")) {
		close(dev);
		err = fz_reload_module("shared_clear=driver", NULL);
		if (err == -EOPNOTSUPP) {
			restore();
			fz_report(FZ_SKIP, "shared_clear_driver",
				  fz_kernel_has_thp() ?
				  "this kernel does not export shmem_get_folio() (before 6.12): refused with EOPNOTSUPP" :
				  "kernel without transparent huge pages: refused with EOPNOTSUPP");
			return fz_exit();
		}
		if (err) {
			fz_report(FZ_FAIL, "shared_clear_driver_loads", strerror(-err));
			restore();
			return fz_exit();
		}
		dev = open(fz_dev_path, O_RDWR);
	}
	fz_run(test_first_touch, &how[0], "read_first_touch_after_dirty_memory_is_zero");
	fz_run(test_first_touch, &how[1], "write_first_touch_after_dirty_memory_is_zero");
	fz_run(test_first_touch, &how[2], "map_populate_after_dirty_memory_is_zero");
	fz_run(test_racing_threads, NULL, "racing_threads_on_one_pmd_see_zeros");
	fz_run(test_order0_fallback, NULL, "huge_allocations_failing_fall_back_to_cleared_4KiB_pages");
	fz_run(test_racing_punch, NULL, "reads_racing_madv_remove_see_zeros");
	fz_run(test_madv_remove, NULL, "madv_remove_as_dev_zero");
	fz_run(test_fork_shares, NULL, "fork_shares_the_object");
	fz_run(test_mremap_grown, NULL, "mremap_grown_sigbus_from_object_end");
	fz_run(test_gives_up, &gives_up[0], "userfaultfd_registration_refused_with_einval");
	fz_run(test_gives_up, &gives_up[1], "vma_anon_name_refused_with_ebadf");
	fz_run(test_gives_up, &gives_up[2], "mremap_moving_three_vmas_refused_with_efault");
	fz_run(test_remap_pages, NULL, "remap_file_pages_as_dev_zero");
	fz_run(test_split_join, &how[0], "mprotect_split_merges_back_as_dev_zero");
	fz_run(test_split_join, &how[1], "mremap_grows_after_split_and_join_as_dev_zero");
	fz_run(test_split_join, &how[2], "maps_names_it_dev_fastzero_deleted");
	fz_run(test_uffd_wp_async, NULL, "userfaultfd_wp_async_registration_as_dev_zero");
	fz_run(test_truncate_map_files, NULL, "truncate_through_map_files_sigbus_as_dev_zero");
	fz_run(test_module_pinned, NULL, "module_stays_while_mapped");
	fz_run(test_pinned_by_pieces, NULL, "module_stays_while_a_split_or_forked_piece_is_mapped");
	close(dev);
	for (i = 0; i < FZ_ARRAY_SIZE(pairs); i++) {
		if (!strcmp(pairs[i].huge, "advise") && !strcmp(pairs[i].clear, "driver"))
			fz_run(test_huge_pair, &pairs[i],
			       "shared_huge_advise_with_shared_clear_driver_refused_with_einval");
		else
			fz_run(test_huge_pair, &pairs[i],
			       "shared_huge_%s_shared_clear_%s_madv_hugepage_mapped_by_pmds",
			       pairs[i].huge, pairs[i].clear);
	}
	restore();
	return fz_exit();
}
