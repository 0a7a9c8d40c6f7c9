// SPDX-License-Identifier: GPL-2.0
/* stats.c - fastzero's counters as read-only sysfs attributes of the misc device. */

#include <linux/device.h>
#include <linux/kernel.h>
#include "stats.h"

DEFINE_PER_CPU(long, fz_stats[FZ_NR_STATS]);

static long fz_stat_sum(enum fz_stat item)
{
	long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(fz_stats[item], cpu);
	return sum;
}

struct fz_stat_attr {
	struct device_attribute attr;
	enum fz_stat item;
};

static ssize_t fz_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct fz_stat_attr *sa = container_of(attr, struct fz_stat_attr, attr);

	return sysfs_emit(buf, "%ld\n", fz_stat_sum(sa->item));
}

/*
 * Root only: the counts move with every user's reads and mappings, which
 * /dev/zero shows nobody; world-readable they would let one user watch
 * another's activity.
 */
#define FZ_STAT_ATTR(_name, _item)					\
	static struct fz_stat_attr fz_stat_attr_##_name = {		\
		.attr = __ATTR(_name, 0400, fz_stat_show, NULL),	\
		.item = _item,						\
	}

FZ_STAT_ATTR(read_calls, FZ_STAT_READ_CALLS);
FZ_STAT_ATTR(read_bytes, FZ_STAT_READ_BYTES);
FZ_STAT_ATTR(read_faults, FZ_STAT_READ_FAULTS);
FZ_STAT_ATTR(read_signals, FZ_STAT_READ_SIGNALS);
FZ_STAT_ATTR(shared_maps, FZ_STAT_SHARED_MAPS);
FZ_STAT_ATTR(private_maps, FZ_STAT_PRIVATE_MAPS);
FZ_STAT_ATTR(shared_clear_pages, FZ_STAT_SHARED_CLEARED);
FZ_STAT_ATTR(shared_preclear_pages, FZ_STAT_SHARED_PRECLEARED);
FZ_STAT_ATTR(splice_copied, FZ_STAT_SPLICE_COPIED);

static struct attribute *fz_stats_attrs[] = {
	&fz_stat_attr_read_calls.attr.attr,
	&fz_stat_attr_read_bytes.attr.attr,
	&fz_stat_attr_read_faults.attr.attr,
	&fz_stat_attr_read_signals.attr.attr,
	&fz_stat_attr_shared_maps.attr.attr,
	&fz_stat_attr_private_maps.attr.attr,
	&fz_stat_attr_shared_clear_pages.attr.attr,
	&fz_stat_attr_shared_preclear_pages.attr.attr,
	&fz_stat_attr_splice_copied.attr.attr,
	NULL,
};

const struct attribute_group fz_stats_group = {
	.name = "stats",
	.attrs = fz_stats_attrs,
};
