// SPDX-License-Identifier: GPL-2.0
/*
 * t_extents - how MAP_SHARED memory is built, seen through the driver's
 * stats: concurrent first touches publish exactly one extent per page,
 * 2 MiB extents take one fault each, max_extent_order is honoured, and
 * everything is freed with the last mapping.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fztest.h"

#define MAP_LEN		(64 * FZ_MiB)
#define NTHREADS	8

static int dev, ref;

struct snap {
	long objects, pages, extents, huge, faults;
};

static void snap(struct snap *s)
{
	s->objects = fz_sysfs_long(FZ_STATS, "shared_objects");
	s->pages = fz_sysfs_long(FZ_STATS, "shared_pages");
	s->extents = fz_sysfs_long(FZ_STATS, "shared_extents");
	s->huge = fz_sysfs_long(FZ_STATS, "shared_huge_extents");
	s->faults = fz_sysfs_long(FZ_STATS, "shared_faults");
}

struct toucher {
	unsigned char *map;
	int id;
};

/* Thread @id writes its id into every NTHREADS-th page, starting at @id. */
static void *touch_pages(void *arg)
{
	const struct toucher *t = arg;
	size_t off;

	for (off = t->id * fz_page; off < MAP_LEN; off += NTHREADS * fz_page)
		t->map[off] = t->id + 1;
	return NULL;
}

static int check_marks(const unsigned char *map, char *why)
{
	size_t off;

	for (off = 0; off < MAP_LEN; off += fz_page) {
		unsigned char want = (off / fz_page) % NTHREADS + 1;

		if (map[off] != want)
			return fz_fail(why, "page %zu holds %u, thread %u wrote it",
				       off / fz_page, map[off], want);
		if (check_zero(map + off + 1, fz_page - 1, why))
			return FZ_FAIL;
	}
	return FZ_PASS;
}

/* 8 threads race to first-touch interleaved pages of one shared mapping. */
static int test_concurrent_touch(const void *arg, char *why)
{
	struct toucher t[NTHREADS];
	pthread_t tid[NTHREADS];
	struct snap a, b;
	unsigned char *map;
	int i, ret;

	(void)arg;
	snap(&a);
	map = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, dev, 0);
	if (map == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	for (i = 0; i < NTHREADS; i++) {
		t[i].map = map;
		t[i].id = i;
		pthread_create(&tid[i], NULL, touch_pages, &t[i]);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(tid[i], NULL);
	snap(&b);
	ret = check_marks(map, why);
	munmap(map, MAP_LEN);
	if (ret)
		return ret;
	if (b.pages - a.pages != (long)(MAP_LEN / fz_page))
		return fz_fail(why, "%ld pages allocated for a %lu-page mapping (overlapping or lost extents)",
			       b.pages - a.pages, MAP_LEN / fz_page);
	snap(&b);
	if (b.pages != a.pages || b.objects != a.objects)
		return fz_fail(why, "after munmap: %ld pages, %ld objects live, were %ld, %ld",
			       b.pages, b.objects, a.pages, a.objects);
	return FZ_PASS;
}

/* Touch @len bytes of a fresh shared mapping; *@minflt = faults taken. */
static int touch_fresh(size_t len, long *minflt, struct snap *d, char *why)
{
	struct rusage r0, r1;
	struct snap a, b;
	unsigned char *map;
	size_t off;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dev, 0);
	if (map == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	snap(&a);
	getrusage(RUSAGE_SELF, &r0);
	for (off = 0; off < len; off += fz_page)
		map[off] = 1;
	getrusage(RUSAGE_SELF, &r1);
	snap(&b);
	munmap(map, len);
	*minflt = r1.ru_minflt - r0.ru_minflt;
	d->extents = b.extents - a.extents;
	d->huge = b.huge - a.huge;
	d->faults = b.faults - a.faults;
	return FZ_PASS;
}

/* With 2 MiB extents (and memory to spare), one fault maps 512 pages. */
static int test_huge_extents(const void *arg, char *why)
{
	size_t nhuge = MAP_LEN / (2 * FZ_MiB);
	struct snap d;
	long minflt;

	(void)arg;
	if (touch_fresh(MAP_LEN, &minflt, &d, why))
		return FZ_FAIL;
	if (d.huge < (long)nhuge / 2)
		return fz_fail(why, "%ld of %zu extents were 2 MiB", d.huge, nhuge);
	if (minflt > d.extents + 8)
		return fz_fail(why, "%ld faults for %ld extents", minflt, d.extents);
	return FZ_PASS;
}

/* max_extent_order=0: one 4 KiB extent, and one fault, per page. */
static int test_order0_extents(const void *arg, char *why)
{
	size_t len = 4 * FZ_MiB, pages = len / fz_page;
	char old[16];
	struct snap d;
	long minflt;
	int ret;

	(void)arg;
	if (fz_read_file(FZ_PARAMS "/max_extent_order", old, sizeof(old)) ||
	    fz_write_file(FZ_PARAMS "/max_extent_order", "0"))
		return fz_fail(why, "cannot set max_extent_order");
	ret = touch_fresh(len, &minflt, &d, why);
	fz_write_file(FZ_PARAMS "/max_extent_order", old);
	if (ret)
		return ret;
	if (d.extents != (long)pages || d.huge)
		return fz_fail(why, "%ld extents (%ld huge) for %zu pages",
			       d.extents, d.huge, pages);
	if (minflt < (long)pages)
		return fz_fail(why, "%ld faults for %zu pages", minflt, pages);
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	fz_setup(argc, argv, &dev, &ref);
	if (!fz_module) {
		fz_report(FZ_SKIP, "extents", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
	fz_run(test_concurrent_touch, NULL, "shared_concurrent_first_touch_one_extent_per_page");
	fz_run(test_huge_extents, NULL, "shared_2MiB_extents_one_fault_each");
	fz_run(test_order0_extents, NULL, "shared_max_extent_order_0");
	return fz_exit();
}
