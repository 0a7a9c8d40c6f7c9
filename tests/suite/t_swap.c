// SPDX-License-Identifier: GPL-2.0
/*
 * t_swap - the device's memory is swappable as /dev/zero's is: private and
 * shared mappings pushed out to swap (MADV_PAGEOUT, and memory.max
 * pressure) read back the bytes stored and zeros everywhere else.
 * Differential: every case runs on the reference too, and where the
 * reference's pages reach swap the device's must as well.  And a
 * measurement, on both devices: how late a read into memory that is
 * partly in swap sees a SIGALRM (docs/design-read.md).
 *
 * Needs a swap device: the harness makes /dev/zram0 a swap area (see
 * tests/vm/initramfs.sh) and the first test turns it on.  Without one every
 * test fails with the reason: the harness failed to set it up.  They skip
 * only where the kernel lacks it (FZ_NO_SWAP: the harness found no zram in
 * the kernel at all; MADV_PAGEOUT: EINVAL before 5.4), or in host
 * development mode (FZ_DEV other than /dev/fastzero: no harness, no root,
 * or a host /dev/zram0 that is not a swap area).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fztest.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define SWAP_DEV	"/dev/zram0"
#define CG_TEST		"/sys/fs/cgroup/fz_swap"
#define BLOCK		(64 * FZ_KiB)	/* even blocks stored to, odd ones read */
#define CG_LIMIT	(16 * FZ_MiB)	/* quick runs: half */

static int dev, ref;
static size_t map_len, cg_limit;
/* test_swap_on()'s result and reason: the other tests report it too. */
static int swap_status = FZ_FAIL;
static char swap_why[FZ_WHYLEN] = "swap_on did not run";

struct swap_case {
	int *fd;
	int flags;		/* MAP_PRIVATE or MAP_SHARED */
};

static unsigned char pattern(size_t block)
{
	return 0x5a ^ (block * 13) ^ (block >> 8);
}

/* Even blocks: store the pattern.  Odd blocks: load (shared: allocates). */
static void fill(unsigned char *p, size_t len)
{
	volatile unsigned char sink;
	size_t b;

	for (b = 0; b * BLOCK < len; b++) {
		if (b % 2 == 0)
			memset(p + b * BLOCK, pattern(b), BLOCK);
		else
			for (size_t i = 0; i < BLOCK; i += fz_page)
				sink = p[b * BLOCK + i];
	}
	(void)sink;
}

static int check(const unsigned char *p, size_t len, char *why)
{
	size_t b, bad;

	for (b = 0; b * BLOCK < len; b++) {
		unsigned char want = b % 2 ? 0 : pattern(b);

		bad = fz_first_not(p + b * BLOCK, BLOCK, want);
		if (bad < BLOCK)
			return fz_fail(why, "byte %zu is %#x, expected %#x",
				       b * BLOCK + bad, p[b * BLOCK + bad], want);
	}
	return FZ_PASS;
}

/* MADV_PAGEOUT came in 5.4: an EINVAL from a newer kernel is a failure. */
static int kernel_has_pageout(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 1;
	return major > 5 || (major == 5 && minor >= 4);
}

/* Store, page out, read back; *kb = swap held after MADV_PAGEOUT. */
static int pageout_one(int fd, int flags, long *kb, char *why)
{
	unsigned char *p;
	int ret;

	p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	fill(p, map_len);
	if (madvise(p, map_len, MADV_PAGEOUT)) {
		if (errno == EINVAL && !kernel_has_pageout())
			ret = fz_skip(why, "kernel without MADV_PAGEOUT (EINVAL, before 5.4)");
		else
			ret = fz_fail(why, "MADV_PAGEOUT: %s", strerror(errno));
		goto out;
	}
	*kb = fz_smaps_kb(p, map_len, "Swap:");
	ret = check(p, map_len, why);
out:
	munmap(p, map_len);
	return ret;
}

static int swap_on(char *why)
{
	const char *lacking = getenv("FZ_NO_SWAP");
	struct stat st;
	int ret = fz_need_root(why);

	if (ret != FZ_PASS)
		return ret;
	if (stat(SWAP_DEV, &st)) {
		if (lacking && *lacking)
			return fz_skip(why, "%s", lacking);
		return fz_harness_missing(why, "no %s: %s", SWAP_DEV,
					  strerror(errno));
	}
	/* Only the harness's is known to be a swap area: a host's may not be. */
	if (swapon(SWAP_DEV, 0) && errno != EBUSY)
		return fz_harness_missing(why, "swapon %s: %s", SWAP_DEV,
					  strerror(errno));
	fz_diag("SwapTotal %ld kB", fz_file_long("/proc/meminfo", "SwapTotal:"));
	return FZ_PASS;
}

static int test_swap_on(const void *arg, char *why)
{
	(void)arg;
	swap_status = swap_on(swap_why);
	snprintf(why, FZ_WHYLEN, "%s", swap_why);
	return swap_status;
}

/* FZ_PASS if swap is on, else swap_on's status with its reason. */
static int need_swap(char *why)
{
	if (swap_status == FZ_PASS)
		return FZ_PASS;
	if (swap_status == FZ_SKIP)
		return fz_skip(why, "no swap: %s", swap_why);
	return fz_fail(why, "no swap: %s", swap_why);
}

/*
 * MADV_PAGEOUT reclaims what only this process maps: both devices' pages
 * go to swap and come back with the stored bytes, zeros elsewhere.
 */
static int test_pageout(const void *arg, char *why)
{
	const struct swap_case *c = arg;
	long kb_ref = 0, kb_dev = 0;
	char sub[FZ_WHYLEN];
	int ret = need_swap(why);

	if (ret != FZ_PASS)
		return ret;
	ret = pageout_one(ref, c->flags, &kb_ref, sub);
	if (ret == FZ_FAIL)
		return fz_fail(why, "%s (%s)", fz_ref_name, sub);
	if (ret != FZ_PASS)
		return fz_skip(why, "%s", sub);
	ret = pageout_one(*c->fd, c->flags, &kb_dev, why);
	if (ret != FZ_PASS)
		return ret;
	fz_diag("swapped after MADV_PAGEOUT of %zu KiB: %s %ld kB, %s %ld kB",
		map_len >> 10, fz_ref_name, kb_ref, fz_dev_name, kb_dev);
	if (kb_ref > 0 && kb_dev <= 0)
		return fz_fail(why, "%s reached swap (%ld kB), %s did not",
			       fz_ref_name, kb_ref, fz_dev_name);
	return FZ_PASS;
}

/* In a child in the test cgroup: fill and check a mapping 4x memory.max. */
static void pressure_child(int fd, int flags)
{
	char pid[32], why[FZ_WHYLEN];
	unsigned char *p;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (fz_write_file(CG_TEST "/cgroup.procs", pid))
		_exit(2);
	p = mmap(NULL, 4 * cg_limit, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED)
		_exit(3);
	fill(p, 4 * cg_limit);
	if (check(p, 4 * cg_limit, why)) {
		fz_diag("%s", why);
		_exit(4);
	}
	_exit(0);
}

/* memory.max pressure pushes the mapping out to swap; it reads back. */
static int test_pressure(const void *arg, char *why)
{
	const struct swap_case *c = arg;
	long before, after;
	int status, ret = need_swap(why);
	pid_t pid;

	if (ret != FZ_PASS)
		return ret;
	ret = fz_memcg_create(CG_TEST, why);
	if (ret != FZ_PASS)
		return ret;
	/* No memory.swap.max (swapaccount=0): swap is not limited anyway. */
	ret = fz_memcg_limit(CG_TEST, cg_limit, "max", why);
	if (ret != FZ_PASS)
		return ret;
	before = fz_file_long("/proc/vmstat", "pswpout ");
	pid = fork();
	if (pid == 0)
		pressure_child(*c->fd, c->flags);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return fz_fail(why, "fork/wait: %s", strerror(errno));
	after = fz_file_long("/proc/vmstat", "pswpout ");
	rmdir(CG_TEST);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fz_fail(why, "child with %lu MiB under memory.max %lu MiB: status %#x",
			       4 * cg_limit >> 20, cg_limit >> 20, status);
	if (after <= before)
		return fz_fail(why, "no page was swapped out (pswpout %ld)", after);
	fz_diag("pswpout +%ld pages", after - before);
	return FZ_PASS;
}

/*
 * The read ramps up on the resident part, then runs into the swapped one;
 * quick runs (the debug kernels, where each swap-in is slow) an eighth of
 * it, with one trial.
 */
#define LAT_RESIDENT	(48u << 20)
#define LAT_SWAPPED	(64u << 20)
#define LAT_TRIALS	4

static size_t lat_resident, lat_swapped;
static unsigned int lat_trials;

static volatile sig_atomic_t lat_alarms;

static void lat_on_alarm(int sig)
{
	(void)sig;
	lat_alarms++;
}

/* Every page its own bytes (zram stores a same-filled page as a count). */
static void lat_fill(unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 64)
		p[i] = (unsigned char)(1 + (i >> 12) + (i >> 6));
}

/* The resident part in memory, the rest pushed out to swap. */
static void lat_prepare(unsigned char *p)
{
	lat_fill(p, lat_resident + lat_swapped);
	madvise(p + lat_resident, lat_swapped, MADV_PAGEOUT);
}

/*
 * One read of the whole buffer from @fd, SIGALRM after @delay s (0: none):
 * the read's time, or with a timer how long after the timer fired the read
 * returned (-1: it returned before the timer fired).
 */
static double lat_read(int fd, unsigned char *p, double delay)
{
	struct itimerval it = { { 0, 0 }, { (long)delay,
					     (long)((delay - (long)delay) * 1e6) } };
	struct sigaction sa = { .sa_handler = lat_on_alarm };
	double t0, end;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	lat_alarms = 0;
	t0 = fz_now();
	if (delay > 0)
		setitimer(ITIMER_REAL, &it, NULL);
	if (read(fd, p, lat_resident + lat_swapped) < 0)
		return -2;
	end = fz_now();
	signal(SIGALRM, SIG_IGN);
	if (delay <= 0)
		return end - t0;
	return lat_alarms ? end - (t0 + delay) : -1;
}

/*
 * A read whose buffer is resident for its first 48 MiB and in zram for
 * the next 64 (quick: 6 and 8): its extents ramp up on the resident
 * part, and the one that runs into the swapped part swaps in page by page
 * with no signal check.  SIGALRM at even fractions of the read's time
 * (1/5..4/5; quick: 1/2); the latency from the timer to the read's
 * return, worst of the trials, on both devices.  Reported, not bounded:
 * what the extent budget does not hold for.
 */
static int test_swapin_latency(const void *arg, char *why)
{
	int fds[2] = { dev, ref }, ret = need_swap(why);
	double full[2], worst[2] = { 0, 0 }, lat;
	unsigned char *p;
	unsigned int d, k;

	(void)arg;
	if (ret != FZ_PASS)
		return ret;
	p = mmap(NULL, lat_resident + lat_swapped, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	for (d = 0; d < 2; d++) {
		lat_prepare(p);
		full[d] = lat_read(fds[d], p, 0);
		for (k = 1; k <= lat_trials && full[d] > 0; k++) {
			lat_prepare(p);
			lat = lat_read(fds[d], p, full[d] * k / (lat_trials + 1));
			if (lat > worst[d])
				worst[d] = lat;
		}
	}
	munmap(p, lat_resident + lat_swapped);
	if (full[0] < 0 || full[1] < 0)
		return fz_fail(why, "read into the buffer failed");
	fz_diag("SIGALRM into a read of %zu MiB resident then %zu MiB in zram: %s read %.0f ms, latency max of %u %.1f ms; %s read %.0f ms, latency max %.1f ms",
		lat_resident >> 20, lat_swapped >> 20, fz_dev_name, full[0] * 1e3,
		lat_trials, worst[0] * 1e3, fz_ref_name, full[1] * 1e3,
		worst[1] * 1e3);
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	static const struct swap_case cases[] = {
		{ &dev, MAP_PRIVATE }, { &dev, MAP_SHARED },
		{ &ref, MAP_PRIVATE }, { &ref, MAP_SHARED },
	};
	size_t i;

	fz_setup(argc, argv, &dev, &ref);
	map_len = (fz_quick ? 16 : 64) * FZ_MiB;
	cg_limit = fz_quick ? CG_LIMIT / 2 : CG_LIMIT;
	lat_resident = fz_quick ? LAT_RESIDENT / 8 : LAT_RESIDENT;
	lat_swapped = fz_quick ? LAT_SWAPPED / 8 : LAT_SWAPPED;
	lat_trials = fz_quick ? 1 : LAT_TRIALS;
	fz_run(test_swap_on, NULL, "swap_on_" "zram0");
	for (i = 0; i < 2; i++)
		fz_run(test_pageout, &cases[i], "%s_pageout_to_swap_reads_back",
		       cases[i].flags == MAP_SHARED ? "shared" : "private");
	for (i = 0; i < FZ_ARRAY_SIZE(cases); i++)
		fz_run(test_pressure, &cases[i], "%s_%s_over_memory_max_swaps_and_reads_back",
		       cases[i].fd == &dev ? "device" : "reference",
		       cases[i].flags == MAP_SHARED ? "shared" : "private");
	fz_run(test_swapin_latency, NULL, "sigalrm_read_into_swapped_memory_latency_measured");
	return fz_exit();
}
