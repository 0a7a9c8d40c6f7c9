// SPDX-License-Identifier: GPL-2.0
/*
 * t_fail - fault injection: every allocation and user copy the device's
 * paths make can fail, and each failure ends in a clean error or is
 * survived, never in an oops, a leak or a wrong byte.
 *
 * The faults are injected with fail-nth (Documentation/fault-injection/
 * fault-injection.rst): writing N to /proc/thread-self/fail-nth fails the
 * N-th fault point this thread reaches (failslab, fail_page_alloc,
 * fail_usercopy, with every filter opened); reading it back gives 0 once
 * the fault was injected.  Each case runs N = 1, 2, ... until the operation
 * completes without reaching the N-th point: every point it has is failed
 * once.  The same is done on the reference where it has the same path.
 *
 * Needs CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC and
 * FAULT_INJECTION_USERCOPY (the debug kernel, tests/vm/debug-kernel.sh);
 * on a kernel without them every test is skipped with the reason.  A
 * setup step that fails where the kernel has them (debugfs not mounted, an
 * attribute that cannot be set) fails every test.  The kernel log between
 * "fastzero-test: expected-injected-faults-begin/end" holds the allocation
 * failure reports the injections cause (tests/vm/check.sh excuses their
 * stack dumps, not KASAN, lockdep or BUG reports).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "fztest.h"

#define DBG		"/sys/kernel/debug"
#define MAX_NTH		2000	/* more fault points than any case has */
#define MAP_LEN		(4 * FZ_MiB)	/* two huge pages shared */
#define READ_CHUNK	4096
#define READ_LEN	(16 * READ_CHUNK)

static int dev, ref, nth_fd = -1;
/* setup()'s result and reason: every injecting test reports it too. */
static int setup_status = FZ_FAIL;
static char setup_why[FZ_WHYLEN] = "fault_injection_available did not run";
static unsigned long injected_total, cases_total;
static sigjmp_buf fault_env;

/*
 * Arm fail-nth: the N-th fault point from now fails (0 disarms).  The
 * write's own copy_from_user() is made before the count is set.
 */
static void nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len && n)
		fz_diag("arming fail-nth %u: %s", n, strerror(errno));
}

/*
 * 1 if the armed fault was injected, and disarm.  The count is read before
 * the read's copy_to_user() reaches a fault point of its own: a count of 1
 * fails that copy (EFAULT), which means the fault was not injected yet.
 */
static int nth_fired(void)
{
	char buf[16] = "";
	int fired = pread(nth_fd, buf, sizeof(buf) - 1, 0) > 0 && atoi(buf) == 0;

	nth_arm(0);
	return fired;
}

/* Write @val to the fault attribute file DBG/@attr/@file. */
static int set_attr(const char *attr, const char *file, const char *val,
		    char *why)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), DBG "/%s/%s", attr, file);
	ret = fz_write_file(path, val);
	if (ret)
		return fz_fail(why, "cannot set %s to %s: %s", path, val,
			       strerror(-ret));
	return FZ_PASS;
}

/*
 * Every fault attribute fails on fail-nth alone: no probability, no limit
 * on the count, sleeping and order-0 allocations included, and quietly
 * (verbose=0: the injection itself prints nothing).
 */
static int setup(char *why)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc",
					     "fail_usercopy" };
	static const struct { const char *attr, *file, *val; } knobs[] = {
		{ "failslab", "ignore-gfp-wait", "N" },
		{ "fail_page_alloc", "ignore-gfp-wait", "N" },
		{ "fail_page_alloc", "ignore-gfp-highmem", "N" },
		{ "fail_page_alloc", "min-order", "0" },
	};
	char path[128];
	struct statfs sfs;
	int fd, ret = fz_need_root(why);
	size_t i;

	if (ret != FZ_PASS)
		return ret;
	if (access("/proc/thread-self/status", F_OK))
		return fz_fail(why, "no /proc/thread-self/status: %s (/proc not mounted?)",
			       strerror(errno));
	fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fd < 0 && errno == ENOENT)
		return fz_skip(why, "kernel without fault injection (no fail-nth; the debug kernel has it)");
	if (fd < 0)
		return fz_fail(why, "open /proc/thread-self/fail-nth: %s",
			       strerror(errno));
	close(fd);
	if (statfs(DBG, &sfs) || sfs.f_type != DEBUGFS_MAGIC) {
		if (!fz_have_fs("debugfs"))
			return fz_skip(why, "kernel without debugfs");
		return fz_fail(why, "debugfs is not mounted on " DBG);
	}
	for (i = 0; i < FZ_ARRAY_SIZE(attrs); i++) {
		snprintf(path, sizeof(path), DBG "/%s", attrs[i]);
		if (access(path, F_OK))
			return fz_skip(why, "kernel without %s (CONFIG_FAILSLAB, FAIL_PAGE_ALLOC, ...: see t_fail.c)",
				       path);
	}
	for (i = 0; i < FZ_ARRAY_SIZE(attrs); i++)
		if (set_attr(attrs[i], "times", "-1", why) ||
		    set_attr(attrs[i], "verbose", "0", why))
			return FZ_FAIL;
	for (i = 0; i < FZ_ARRAY_SIZE(knobs); i++)
		if (set_attr(knobs[i].attr, knobs[i].file, knobs[i].val, why))
			return FZ_FAIL;
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0)
		return fz_fail(why, "open /proc/thread-self/fail-nth: %s",
			       strerror(errno));
	return FZ_PASS;
}

static int test_setup(const void *arg, char *why)
{
	(void)arg;
	setup_status = setup(setup_why);
	snprintf(why, FZ_WHYLEN, "%s", setup_why);
	return setup_status;
}

/*
 * Run @op with its N-th fault point failed, for N = 1, 2, ... until @op
 * completes without reaching it.  @op arms fail-nth itself, around the
 * operation under test only, sets *@fired, and returns FZ_PASS if what it
 * saw is right for an injected or an uninjected run.
 */
static int every_point(int (*op)(int fd, unsigned int n, int *fired, char *why),
		       int fd, const char *name, char *why)
{
	unsigned int n;
	int fired = 0, ret = FZ_PASS;

	if (setup_status == FZ_SKIP)
		return fz_skip(why, "no fault injection: %s", setup_why);
	if (setup_status != FZ_PASS)
		return fz_fail(why, "no fault injection: %s", setup_why);
	fz_kmsg("expected-injected-faults-begin");
	for (n = 1; n <= MAX_NTH; n++) {
		ret = op(fd, n, &fired, why);
		if (ret != FZ_PASS || !fired)
			break;
	}
	fz_kmsg("expected-injected-faults-end");
	if (ret != FZ_PASS)
		return ret;
	if (n > MAX_NTH)
		return fz_fail(why, "still failing after %u fault points", MAX_NTH);
	fz_diag("%s: %u fault points injected and survived", name, n - 1);
	injected_total += n - 1;
	cases_total++;
	return FZ_PASS;
}

static int op_mmap(int fd, unsigned int n, int *fired, char *why, int flags)
{
	unsigned char *p;
	int err;

	nth_arm(n);
	p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, flags, fd, 0);
	err = p == MAP_FAILED ? errno : 0;
	*fired = nth_fired();
	/*
	 * ENOSPC: shmem's inode allocation failing (__shmem_get_inode()), for
	 * /dev/zero's shared mappings too.
	 */
	if (err) {
		if (!*fired || (err != ENOMEM && err != EAGAIN && err != ENOSPC))
			return fz_fail(why, "fault point %u: mmap failed with %s%s",
				       n, strerror(err), *fired ? "" : " without an injected fault");
		return FZ_PASS;
	}
	/* Survived the failure (a fallback) or none was injected: it must work. */
	p[MAP_LEN - 1] = 1;
	err = p[0] != 0 || p[MAP_LEN - 1] != 1;
	munmap(p, MAP_LEN);
	if (err)
		return fz_fail(why, "fault point %u: the mapping does not hold zeros", n);
	return FZ_PASS;
}

static int op_mmap_shared(int fd, unsigned int n, int *fired, char *why)
{
	return op_mmap(fd, n, fired, why, MAP_SHARED);
}

static int op_mmap_private(int fd, unsigned int n, int *fired, char *why)
{
	return op_mmap(fd, n, fired, why, MAP_PRIVATE);
}

static void on_fault(int sig)
{
	siglongjmp(fault_env, sig);
}

/*
 * The first touch of a shared mapping (huge page, then the order-0
 * fallback, the page cache's xarray nodes, the page tables) with one of
 * its allocations failed: the fault is retried or falls back, never a
 * signal, and the bytes are right.
 */
static int op_touch(int fd, unsigned int n, int *fired, char *why)
{
	unsigned char *p;
	volatile int sig;
	int bad;

	p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	nth_arm(n);
	sig = sigsetjmp(fault_env, 1);
	if (!sig) {
		p[4096] = 0x5a;
		(void)*(volatile unsigned char *)(p + 3 * FZ_MiB);
	}
	*fired = nth_fired();
	bad = !sig && (p[4096] != 0x5a || fz_first_not(p, 4096, 0) != 4096 ||
		       p[3 * FZ_MiB] != 0);
	munmap(p, MAP_LEN);
	if (sig)
		return fz_fail(why, "fault point %u%s: signal %d on first touch", n,
			       *fired ? " failed" : "", sig);
	if (bad)
		return fz_fail(why, "fault point %u: wrong bytes after the first touch", n);
	return FZ_PASS;
}

/*
 * read() in 4 KiB extents with the user clear of extent N failed: the
 * first N - 1 extents are zero and counted, nothing after them is written,
 * and a failure in the first extent is -EFAULT (/dev/zero's semantics for
 * a fault).
 */
static int op_read(int fd, unsigned int n, int *fired, char *why)
{
	static unsigned char buf[READ_LEN];
	size_t want;
	ssize_t got;
	int err;

	memset(buf, FZ_POISON, sizeof(buf));
	nth_arm(n);
	got = read(fd, buf, READ_LEN);
	err = errno;
	*fired = nth_fired();
	if (*fired && n == 1) {
		if (got != -1 || err != EFAULT)
			return fz_fail(why, "first extent failed: read returned %zd (%s), expected EFAULT",
				       got, got < 0 ? strerror(err) : "no error");
		return check_untouched(buf, READ_LEN, why);
	}
	want = *fired ? (n - 1) * READ_CHUNK : READ_LEN;
	if (got != (ssize_t)want)
		return fz_fail(why, "extent %u%s: read returned %zd, expected %zu", n,
			       *fired ? " failed" : "", got, want);
	if (fz_first_not(buf, want, 0) != want)
		return fz_fail(why, "extent %u: a byte before the failure is not zero", n);
	return check_untouched(buf + want, READ_LEN - want, why);
}

static int test_mmap_shared(const void *arg, char *why)
{
	return every_point(op_mmap_shared, *(const int *)arg, "mmap MAP_SHARED", why);
}

static int test_mmap_private(const void *arg, char *why)
{
	return every_point(op_mmap_private, *(const int *)arg, "mmap MAP_PRIVATE", why);
}

static int test_touch(const void *arg, char *why)
{
	return every_point(op_touch, *(const int *)arg, "first touch", why);
}

static int test_read(const void *arg, char *why)
{
	char old[32];
	int ret;

	(void)arg;
	if (!fz_module)
		return fz_skip(why, "module tests disabled");
	if (fz_read_file(FZ_PARAMS "/chunk_size", old, sizeof(old)) ||
	    fz_write_file(FZ_PARAMS "/chunk_size", "4096"))
		return fz_fail(why, "cannot set chunk_size");
	ret = every_point(op_read, dev, "read of 16 extents", why);
	fz_write_file(FZ_PARAMS "/chunk_size", old);
	if (ret == FZ_PASS && injected_total && cases_total)
		fz_diag("so far %lu faults injected, all survived", injected_total);
	return ret;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_fault };

	fz_setup(argc, argv, &dev, &ref);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	fz_run(test_setup, NULL, "fault_injection_available");
	fz_run(test_mmap_shared, &dev, "device_mmap_shared_every_allocation_failed");
	fz_run(test_mmap_shared, &ref, "reference_mmap_shared_every_allocation_failed");
	fz_run(test_mmap_private, &dev, "device_mmap_private_every_allocation_failed");
	fz_run(test_touch, &dev, "device_shared_first_touch_every_allocation_failed");
	fz_run(test_touch, &ref, "reference_shared_first_touch_every_allocation_failed");
	fz_run(test_read, NULL, "device_read_every_extent_copy_failed");
	fz_diag("fault injection: %lu faults injected in %lu cases, all survived",
		injected_total, cases_total);
	return fz_exit();
}
