// SPDX-License-Identifier: GPL-2.0
/*
 * t_huge - what fastzero adds to /dev/zero's MAP_SHARED memory: huge pages.
 * Every 2 MiB of a shared object of whole 2 MiB huge pages is a shmem
 * transparent huge page, mapped with one PMD on its first fault; objects of
 * any other size and mappings with MADV_NOHUGEPAGE use 4 KiB pages; racing
 * first touches share one page; splitting one by MADV_REMOVE of 4 KiB
 * behaves as /dev/zero's; shmem_enabled=deny turns
 * them off.  Private mappings get huge pages when /dev/zero's do, under
 * each transparent_hugepage/enabled mode.  Seen through /proc/meminfo,
 * smaps and the fault counters.  Needs shared_huge=within_size.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fztest.h"

#define PMD_LEN		(2 * FZ_MiB)
#define MAP_LEN		(64 * FZ_MiB)
#define NTHREADS	8

static int dev, ref;

static long meminfo_kb(const char *key)
{
	return fz_file_long("/proc/meminfo", key);
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static unsigned char *map_shared(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Write one byte per 4 KiB page of [p, p + len). */
static void touch(unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += fz_page)
		p[i] = 1;
}

/*
 * First touch of 64 MiB: one fault and one PMD mapping per 2 MiB on the
 * device; /dev/zero's 4 KiB shmem pages take a fault each (diagnostic).
 */
static int test_one_fault_per_2m(const void *arg, char *why)
{
	long f0, faults, ref_faults, pmd0, pmd;
	unsigned char *p = map_shared(ref, MAP_LEN);
	int ret = FZ_PASS;
	size_t i;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap %s: %s", fz_ref_name, strerror(errno));
	f0 = minflt();
	touch(p, MAP_LEN);
	ref_faults = minflt() - f0;
	munmap(p, MAP_LEN);

	p = map_shared(dev, MAP_LEN);
	if (!p)
		return fz_fail(why, "mmap %s: %s", fz_dev_name, strerror(errno));
	if ((unsigned long)p % PMD_LEN)
		ret = fz_fail(why, "mapping at %p is not 2 MiB aligned", p);
	pmd0 = meminfo_kb("ShmemPmdMapped:");
	f0 = minflt();
	touch(p, MAP_LEN);
	faults = minflt() - f0;
	pmd = meminfo_kb("ShmemPmdMapped:") - pmd0;
	fz_diag("  64 MiB first touch: %s %ld faults, %s %ld faults, ShmemPmdMapped +%ld kB",
		fz_dev_name, faults, fz_ref_name, ref_faults, pmd);
	if (ret == FZ_PASS && faults > (long)(MAP_LEN / PMD_LEN) + 8)
		ret = fz_fail(why, "%ld faults for 64 MiB, expected about %lu",
			      faults, MAP_LEN / PMD_LEN);
	else if (ret == FZ_PASS && pmd < (long)(MAP_LEN / FZ_KiB) * 9 / 10)
		ret = fz_fail(why, "ShmemPmdMapped grew by %ld kB, expected %lu",
			      pmd, MAP_LEN / FZ_KiB);
	for (i = 0; ret == FZ_PASS && i < MAP_LEN; i += fz_page)
		if (p[i] != 1 || check_zero(p + i + 1, fz_page - 1, why))
			ret = fz_fail(why, "page at offset %zu: first byte %u, rest not zero",
				      i, p[i]);
	munmap(p, MAP_LEN);
	return ret;
}

/*
 * ShmemHugePages grows by @want_kb when @len bytes of the device are mapped
 * (with @advice, if not 0) and touched, and shrinks back with the mapping.
 */
static int huge_growth(size_t len, int advice, long want_kb, char *why)
{
	unsigned char *p = map_shared(dev, len);
	long h0 = meminfo_kb("ShmemHugePages:"), grew, left;
	int ret = FZ_PASS;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (advice && madvise(p, len, advice))
		ret = fz_fail(why, "madvise: %s", strerror(errno));
	touch(p, len);
	grew = meminfo_kb("ShmemHugePages:") - h0;
	if (ret == FZ_PASS && check_zero(p + 1, fz_page - 1, why))
		ret = FZ_FAIL;
	munmap(p, len);
	left = meminfo_kb("ShmemHugePages:") - h0;
	if (ret == FZ_PASS && grew != want_kb)
		ret = fz_fail(why, "ShmemHugePages grew by %ld kB, expected %ld",
			      grew, want_kb);
	else if (ret == FZ_PASS && left)
		ret = fz_fail(why, "%ld kB of huge pages left after munmap", left);
	return ret;
}

/*
 * 3 MiB takes 4 KiB pages, as /dev/zero's: a huge page over its 2..4 MiB
 * could straddle the object's end once mremap() grows the VMA (7.x's
 * huge=within_size lets one in; fz_shared_huge_ok() in driver/mmap.c).
 */
static int test_odd_size(const void *arg, char *why)
{
	(void)arg;
	return huge_growth(3 * FZ_MiB, 0, 0, why);
}

/* A whole number of huge pages: 4 MiB is two, on every kernel. */
static int test_whole_huge_pages(const void *arg, char *why)
{
	(void)arg;
	return huge_growth(4 * FZ_MiB, 0, 2 * PMD_LEN / FZ_KiB, why);
}

/* MADV_NOHUGEPAGE before the first touch keeps 4 KiB pages, as shmem does. */
static int test_nohugepage(const void *arg, char *why)
{
	(void)arg;
	return huge_growth(4 * FZ_MiB, MADV_NOHUGEPAGE, 0, why);
}

struct toucher {
	unsigned char *map;
	pthread_barrier_t *go;
	int id;
};

/* Touch every page (each thread in its own order), then write own pages. */
static void *toucher_main(void *arg)
{
	struct toucher *t = arg;
	size_t n = MAP_LEN / fz_page, i, pg;

	pthread_barrier_wait(t->go);
	for (i = 0; i < n; i++) {
		pg = (i * 7919 + t->id * (n / NTHREADS)) % n;
		if (t->map[pg * fz_page + 1])
			return t;	/* not zero on first sight */
	}
	for (pg = t->id; pg < n; pg += NTHREADS)
		t->map[pg * fz_page] = (unsigned char)(t->id + 1);
	return NULL;
}

/*
 * Eight threads racing to first-touch one mapping see zeros, share one huge
 * page per 2 MiB (no page allocated twice), and see each other's writes.
 */
static int test_racing_first_touch(const void *arg, char *why)
{
	struct toucher t[NTHREADS];
	pthread_t tid[NTHREADS];
	pthread_barrier_t go;
	long h0 = meminfo_kb("ShmemHugePages:"), grew;
	unsigned char *p = map_shared(dev, MAP_LEN);
	void *res;
	size_t pg;
	int i, ret = FZ_PASS;

	(void)arg;
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	pthread_barrier_init(&go, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		t[i] = (struct toucher){ .map = p, .go = &go, .id = i };
		pthread_create(&tid[i], NULL, toucher_main, &t[i]);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(tid[i], &res);
		if (res && ret == FZ_PASS)
			ret = fz_fail(why, "thread %d saw a non-zero byte", i);
	}
	pthread_barrier_destroy(&go);
	grew = meminfo_kb("ShmemHugePages:") - h0;
	for (pg = 0; ret == FZ_PASS && pg < MAP_LEN / fz_page; pg++)
		if (p[pg * fz_page] != pg % NTHREADS + 1)
			ret = fz_fail(why, "page %zu holds %u, expected %zu", pg,
				      p[pg * fz_page], pg % NTHREADS + 1);
	if (ret == FZ_PASS && grew != (long)(MAP_LEN / FZ_KiB))
		ret = fz_fail(why, "ShmemHugePages grew by %ld kB for a %lu kB mapping",
			      grew, MAP_LEN / FZ_KiB);
	munmap(p, MAP_LEN);
	return ret;
}

/*
 * MADV_REMOVE of one 4 KiB page inside a written huge page: the return, the
 * page reading zero and its neighbours keeping their data, as /dev/zero.
 */
static int remove_4k(int fd, char *why)
{
	unsigned char *p = map_shared(fd, 2 * PMD_LEN);
	int ret = FZ_PASS;

	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	memset(p, 0x6b, 2 * PMD_LEN);
	if (madvise(p + 5 * fz_page, fz_page, MADV_REMOVE))
		ret = fz_fail(why, "MADV_REMOVE: %s", strerrorname_np(errno));
	else if (check_byte(p, 5 * fz_page, 0x6b, why) ||
		 check_zero(p + 5 * fz_page, fz_page, why) ||
		 check_byte(p + 6 * fz_page, 2 * PMD_LEN - 6 * fz_page, 0x6b, why))
		ret = FZ_FAIL;
	munmap(p, 2 * PMD_LEN);
	return ret;
}

static int test_remove_4k(const void *arg, char *why)
{
	char sub[FZ_WHYLEN];

	(void)arg;
	if (remove_4k(ref, sub) != FZ_PASS)
		return fz_skip(why, "%s fails too: %s", fz_ref_name, sub);
	return remove_4k(dev, why);
}

#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage/"

/* The selected mode of THP_SYSFS @file ("always [madvise] never"): 0 or -1. */
static int thp_mode_get(const char *file, char *mode, size_t len)
{
	char path[128], buf[128], *sel, *end;

	snprintf(path, sizeof(path), THP_SYSFS "%s", file);
	if (fz_read_file(path, buf, sizeof(buf)))
		return -1;
	sel = strchr(buf, '[');
	end = sel ? strchr(sel, ']') : NULL;
	if (!end)
		return -1;
	*end = '\0';
	snprintf(mode, len, "%s", sel + 1);
	return 0;
}

/* Map @len private, touch it all, check it: kB of anonymous huge pages. */
static long private_huge_kb(int fd, size_t len, char *why)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				fd, 0);
	long kb;

	if (p == MAP_FAILED) {
		fz_fail(why, "mmap: %s", strerror(errno));
		return -1;
	}
	touch(p, len);
	kb = fz_smaps_kb(p, len, "AnonHugePages:");
	if (check_byte(p, 1, 1, why) || check_zero(p + 1, fz_page - 1, why))
		kb = -1;
	munmap(p, len);
	return kb;
}

/*
 * With transparent_hugepage/enabled set to @arg, private mappings of the
 * device get huge pages exactly when /dev/zero's do (both are anonymous
 * memory, both THP-aligned), and read zeros either way.
 */
static int test_thp_enabled(const void *arg, char *why)
{
	const char *mode = arg;
	char old[64];
	long kb_ref, kb_dev;
	int ret;

	if (access(THP_SYSFS "enabled", F_OK))
		return fz_skip(why, "kernel without THP (no " THP_SYSFS "enabled)");
	if (thp_mode_get("enabled", old, sizeof(old)))
		return fz_fail(why, "cannot read the mode of " THP_SYSFS "enabled");
	ret = fz_write_file(THP_SYSFS "enabled", mode);
	if (ret)
		return fz_fail(why, "cannot set enabled=%s: %s", mode,
			       strerror(-ret));
	kb_ref = private_huge_kb(ref, 8 * PMD_LEN, why);
	kb_dev = kb_ref < 0 ? -1 : private_huge_kb(dev, 8 * PMD_LEN, why);
	fz_write_file(THP_SYSFS "enabled", old);
	if (kb_ref < 0 || kb_dev < 0)
		return FZ_FAIL;
	fz_diag("enabled=%s: AnonHugePages %s %ld kB, %s %ld kB", mode,
		fz_ref_name, kb_ref, fz_dev_name, kb_dev);
	if ((kb_ref > 0) != (kb_dev > 0))
		return fz_fail(why, "enabled=%s: %s has %ld kB of huge pages, %s %ld kB",
			       mode, fz_ref_name, kb_ref, fz_dev_name, kb_dev);
	return FZ_PASS;
}

/* shmem_enabled=deny forces huge pages off every tmpfs mount: fastzero's too. */
static int test_shmem_deny(const void *arg, char *why)
{
	char old[64];
	unsigned char *p;
	long kb = -1;
	int ret;

	(void)arg;
	if (access(THP_SYSFS "shmem_enabled", F_OK))
		return fz_skip(why, "kernel without shmem THP (no " THP_SYSFS "shmem_enabled)");
	if (thp_mode_get("shmem_enabled", old, sizeof(old)))
		return fz_fail(why, "cannot read the mode of " THP_SYSFS "shmem_enabled");
	ret = fz_write_file(THP_SYSFS "shmem_enabled", "deny");
	if (ret)
		return fz_fail(why, "cannot set shmem_enabled=deny: %s",
			       strerror(-ret));
	p = map_shared(dev, 4 * PMD_LEN);
	if (p) {
		touch(p, 4 * PMD_LEN);
		kb = fz_smaps_kb(p, 4 * PMD_LEN, "ShmemPmdMapped:");
		munmap(p, 4 * PMD_LEN);
	}
	fz_write_file(THP_SYSFS "shmem_enabled", old);
	if (!p)
		return fz_fail(why, "mmap: %s", strerror(errno));
	if (kb != 0)
		return fz_fail(why, "%ld kB mapped by PMDs under shmem_enabled=deny", kb);
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	char huge[32] = "";

	fz_setup(argc, argv, &dev, &ref);
	if (!fz_module) {
		fz_report(FZ_SKIP, "huge_pages", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
	if (fz_read_file(FZ_PARAMS "/shared_huge", huge, sizeof(huge))) {
		fz_report(FZ_FAIL, "huge_pages", "cannot read " FZ_PARAMS "/shared_huge");
		return fz_exit();
	}
	if (!fz_kernel_has_thp()) {
		fz_report(strcmp(huge, "never") ? FZ_FAIL : FZ_PASS,
			  "no_thp_shared_huge_is_never",
			  strcmp(huge, "never") ? "shared_huge is not never on a kernel without THP" : NULL);
		fz_report(FZ_SKIP, "huge_pages",
			  "kernel without transparent huge pages (no /sys/kernel/mm/transparent_hugepage)");
		return fz_exit();
	}
	/* The tests assume the default policy, which the harness loads. */
	if (strcmp(huge, "within_size")) {
		fz_report(FZ_FAIL, "huge_pages", "the module was loaded with shared_huge other than within_size (load it with the default)");
		return fz_exit();
	}
	fz_run(test_one_fault_per_2m, NULL, "shared_first_touch_one_fault_per_2MiB");
	fz_run(test_whole_huge_pages, NULL, "shared_4MiB_is_two_huge_pages");
	fz_run(test_odd_size, NULL, "shared_3MiB_takes_4KiB_pages");
	fz_run(test_nohugepage, NULL, "shared_madv_nohugepage_honoured");
	fz_run(test_racing_first_touch, NULL, "shared_8_threads_racing_first_touch");
	fz_run(test_remove_4k, NULL, "shared_madv_remove_4KiB_inside_huge_page");
	fz_run(test_shmem_deny, NULL, "shared_shmem_enabled_deny_honoured");
	fz_run(test_thp_enabled, "always", "private_thp_always_huge_as_reference");
	fz_run(test_thp_enabled, "madvise", "private_thp_madvise_huge_as_reference");
	fz_run(test_thp_enabled, "never", "private_thp_never_huge_as_reference");
	return fz_exit();
}
