/* SPDX-License-Identifier: GPL-2.0 */
/* stats.h - per-CPU event counters, summed for /sys/class/misc/fastzero/stats/. */
#ifndef _FASTZERO_STATS_H
#define _FASTZERO_STATS_H

#include <linux/percpu.h>
#include <linux/sysfs.h>

enum fz_stat {
	FZ_STAT_READ_CALLS,	/* read/read_iter calls */
	FZ_STAT_READ_BYTES,	/* bytes zeroed by reads */
	FZ_STAT_READ_FAULTS,	/* reads cut short by a user fault */
	FZ_STAT_READ_SIGNALS,	/* reads cut short by a pending signal */
	FZ_STAT_SHARED_MAPS,	/* MAP_SHARED mmap() calls (shmem objects made) */
	FZ_STAT_PRIVATE_MAPS,	/* MAP_PRIVATE mmap() calls */
	FZ_STAT_SHARED_CLEARED,	/* shared_clear=driver: pages it cleared */
	FZ_STAT_SHARED_PRECLEARED, /* ... pages the allocator had cleared */
	FZ_STAT_SPLICE_COPIED,	/* splices copied: the CPU's lent page at its bound */
	FZ_NR_STATS,
};

DECLARE_PER_CPU(long, fz_stats[FZ_NR_STATS]);

static inline void fz_stat_add(enum fz_stat item, long delta)
{
	this_cpu_add(fz_stats[item], delta);
}

static inline void fz_stat_inc(enum fz_stat item)
{
	fz_stat_add(item, 1);
}

extern const struct attribute_group fz_stats_group;

#endif /* _FASTZERO_STATS_H */
