// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - the /dev/fastzero misc device: file operations, module parameters.
 *
 * /dev/fastzero behaves like /dev/zero: reads return zeros, writes are
 * discarded, seeks always land at 0, and mmap() gives zero-filled memory.
 * It is faster because reads clear user memory in large chunks with the
 * loop the CPU does best (arch.h), splices lend the zero page (splice.c),
 * and shared mappings are shmem in transparent huge pages (mmap.c).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uio.h>
#include "arch.h"
#include "compat.h"
#include "fastzero.h"
#include "stats.h"

const char * const fz_loop_names[FZ_NR_LOOPS] = FZ_LOOP_NAMES;

/* As /dev/zero (drivers/char/mem.c, devlist[]): IOCB_NOWAIT reads are served. */
static int fz_open(struct inode *inode, struct file *file)
{
	int ret = fz_read_open(file);

	if (ret)
		return ret;
	file->f_mode |= FMODE_NOWAIT;
	return 0;
}

static int fz_release(struct inode *inode, struct file *file)
{
	fz_read_release(file);
	return 0;
}

static ssize_t fz_write(struct file *file, const char __user *buf,
			size_t count, loff_t *ppos)
{
	return count;
}

static ssize_t fz_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	size_t count = iov_iter_count(from);

	iov_iter_advance(from, count);
	return count;
}

static loff_t fz_llseek(struct file *file, loff_t offset, int orig)
{
	file->f_pos = 0;
	return 0;
}

static const struct file_operations fz_fops = {
	.owner			= THIS_MODULE,
	.open			= fz_open,
	.release		= fz_release,
	.llseek			= fz_llseek,
	.read_iter		= fz_read_iter,
	.write			= fz_write,
	.write_iter		= fz_write_iter,
	.splice_read		= fz_splice_read,
	.splice_write		= FZ_SPLICE_WRITE,
	.mmap			= fz_mmap,
	.get_unmapped_area	= fz_get_unmapped_area,
};

/*
 * A value written at run time that a ->set refuses earns only an errno in
 * the writer's shell; at load, parse_args() logs the refusal.  Say why
 * in the log in both cases, rate-limited since any root shell can write.
 */
static int fz_param_refuse(const struct kernel_param *kp, const char *val,
			   int err, const char *why)
{
	pr_warn_ratelimited("%s=%.*s refused: %s\n", kp->name,
			    (int)strcspn(val, "\n"), val, why);
	return err;
}

/* chunk_size: bytes cleared between signal and reschedule checks. */
static int fz_chunk_size_set(const char *val, const struct kernel_param *kp)
{
	unsigned long size;

	if (kstrtoul(val, 0, &size))
		return fz_param_refuse(kp, val, -EINVAL, "not a number");
	if (size != FZ_CHUNK_AUTO && (size < FZ_CHUNK_MIN || size > FZ_CHUNK_MAX))
		return fz_param_refuse(kp, val, -EINVAL,
				       "neither 0 nor from 4096 to 268435456");
	WRITE_ONCE(fz_chunk_size, size);
	return 0;
}

static const struct kernel_param_ops fz_chunk_size_ops = {
	.set	= fz_chunk_size_set,
	.get	= param_get_ulong,
};

module_param_cb(chunk_size, &fz_chunk_size_ops, &fz_chunk_size, 0644);
MODULE_PARM_DESC(chunk_size,
		 "Bytes a read clears between signal checks: 0 (default) sized in time per read, else 4096 to 256 MiB");

/*
 * nt_threshold is derived from the CPU at load (fz_thresholds_init())
 * unless given; a value given, at load or at run time, replaces the
 * reason with "set by parameter".
 */
static const char *fz_nt_threshold_why;
const char *const fz_set_by_param = "set by parameter";

/**
 * fz_param_ulong_set() - parse an unsigned long module parameter, or refuse it
 * @val: the value given
 * @kp: the parameter; kp->arg is the unsigned long
 *
 * Not param_set_ulong(): readers use READ_ONCE() while the value may be
 * written at run time, so the store is a WRITE_ONCE() too, and a refusal
 * is logged with its reason.
 *
 * Return: 0, or -EINVAL when @val is not a number.
 */
int fz_param_ulong_set(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	if (kstrtoul(val, 0, &v))
		return fz_param_refuse(kp, val, -EINVAL, "not a number");
	WRITE_ONCE(*(unsigned long *)kp->arg, v);
	return 0;
}

static int fz_nt_threshold_set(const char *val, const struct kernel_param *kp)
{
	int ret = fz_param_ulong_set(val, kp);

	if (!ret)
		WRITE_ONCE(fz_nt_threshold_why, fz_set_by_param);
	return ret;
}

static const struct kernel_param_ops fz_nt_threshold_ops = {
	.set	= fz_nt_threshold_set,
	.get	= param_get_ulong,
};

module_param_cb(nt_threshold, &fz_nt_threshold_ops, &fz_nt_threshold, 0644);
MODULE_PARM_DESC(nt_threshold,
		 "Reads of at least this many bytes use the non-temporal store, cold_variant's or else nt (0: never); default derived from the CPU");

/*
 * The store for cold destinations (policy.h): huge folios fresh from the
 * allocator (shared_clear.c) always, and reads of at least cold_threshold
 * bytes once the open file's back-to-back reads have streamed nt_threshold
 * bytes (read.c).  The CPU's rules choose it at load.
 */
enum fz_loop fz_cold_loop = FZ_LOOP_AUTO;
unsigned long fz_cold_threshold = FZ_COLD_THRESHOLD;
static const char *fz_cold_why = "not derived yet";
static bool fz_cold_threshold_set_by_param;

static int fz_cold_threshold_set(const char *val, const struct kernel_param *kp)
{
	int ret = fz_param_ulong_set(val, kp);

	if (!ret)
		WRITE_ONCE(fz_cold_threshold_set_by_param, true);
	return ret;
}

static const struct kernel_param_ops fz_cold_threshold_ops = {
	.set	= fz_cold_threshold_set,
	.get	= param_get_ulong,
};

module_param_cb(cold_threshold, &fz_cold_threshold_ops, &fz_cold_threshold, 0644);
MODULE_PARM_DESC(cold_threshold,
		 "Reads of at least this many bytes use cold_variant once the file's back-to-back reads streamed nt_threshold bytes (0: never)");

/* force_variant: "auto", or a loop name to use whatever the CPU. */
static int fz_force_variant_set(const char *val, const struct kernel_param *kp)
{
	const char *why;
	int loop;

	if (sysfs_streq(val, "auto")) {
		WRITE_ONCE(fz_forced_loop, FZ_LOOP_AUTO);
		return 0;
	}
	loop = sysfs_match_string(fz_loop_names, val);
	if (loop < 0)
		return fz_param_refuse(kp, val, loop, "not auto or a loop name");
	why = fz_arch_loop_refused(loop);
	if (why)
		return fz_param_refuse(kp, val, -EOPNOTSUPP, why);
	WRITE_ONCE(fz_forced_loop, loop);
	return 0;
}

static int fz_force_variant_get(char *buf, const struct kernel_param *kp)
{
	enum fz_loop loop = READ_ONCE(fz_forced_loop);

	return sysfs_emit(buf, "%s\n",
			  loop == FZ_LOOP_AUTO ? "auto" : fz_loop_names[loop]);
}

static const struct kernel_param_ops fz_force_variant_ops = {
	.set	= fz_force_variant_set,
	.get	= fz_force_variant_get,
};

module_param_cb(force_variant, &fz_force_variant_ops, NULL, 0644);
MODULE_PARM_DESC(force_variant,
		 "Clear loop for reads: auto (chosen at load), or one this CPU runs: "
		 FZ_LOOP_LIST);

/*
 * A load-time parameter that takes one of a list of names: @val is the
 * index, @names the list (sysfs_match_string()), @check, if set, may
 * refuse a listed value with an errno.
 */
struct fz_choice {
	int *val;
	const char * const *names;
	size_t n;
	int (*check)(int i);
};

static int fz_choice_set(const char *val, const struct kernel_param *kp)
{
	const struct fz_choice *c = kp->arg;
	int i = __sysfs_match_string(c->names, c->n, val);
	int ret;

	if (i < 0)
		return fz_param_refuse(kp, val, i, "not one of the listed names");
	ret = c->check ? c->check(i) : 0;
	if (!ret)
		*c->val = i;
	return ret;
}

static int fz_choice_get(char *buf, const struct kernel_param *kp)
{
	const struct fz_choice *c = kp->arg;

	return sysfs_emit(buf, "%s\n", c->names[*c->val]);
}

static const struct kernel_param_ops fz_choice_ops = {
	.set	= fz_choice_set,
	.get	= fz_choice_get,
};

/* shared_huge: the huge= policy of the tmpfs behind MAP_SHARED, set at load. */
static struct fz_choice fz_shared_huge_choice = {
	&fz_shared_huge, fz_shared_huge_names, FZ_NR_SHARED_HUGE, NULL,
};
module_param_cb(shared_huge, &fz_choice_ops, &fz_shared_huge_choice, 0444);
MODULE_PARM_DESC(shared_huge,
		 "Huge pages for MAP_SHARED, as tmpfs huge=: never, always, within_size (default) or advise");

/*
 * shared_clear: who clears a shared mapping's huge folios, set at load:
 * shmem (default) or the driver (shared_clear.c), which needs an exported
 * shmem_get_folio() (6.12 and 7.x here; 6.1 has none) and THP.
 */
static int fz_shared_clear_check(int who)
{
	if (who == FZ_SHARED_CLEAR_DRIVER && !FZ_CAN_CLEAR_SHARED) {
		pr_err("shared_clear=driver: this kernel has no transparent huge pages or does not export shmem_get_folio()\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

static struct fz_choice fz_shared_clear_choice = {
	&fz_shared_clear, fz_shared_clear_names, FZ_NR_SHARED_CLEAR,
	fz_shared_clear_check,
};
module_param_cb(shared_clear, &fz_choice_ops, &fz_shared_clear_choice, 0444);
MODULE_PARM_DESC(shared_clear,
		 "Who clears MAP_SHARED huge pages: shmem (default) or driver (once, with the cold store)");
/* The values this build accepts, for tools: modinfo -F shared_clear */
#if FZ_CAN_CLEAR_SHARED
MODULE_INFO(shared_clear, "shmem driver");
#else
MODULE_INFO(shared_clear, "shmem");
#endif

/*
 * splice_huge: lend pipes a 2 MiB zero page (one buffer per splice call)
 * rather than a 4 KiB one; set at load, when the pages are allocated.
 * Off by default: consumers that copy the data read it from 2 MiB instead
 * of one cache-hot page (splice.c).
 */
static bool fz_splice_huge;
module_param_named(splice_huge, fz_splice_huge, bool, 0444);
MODULE_PARM_DESC(splice_huge,
		 "splice_read() lends a 2 MiB zero page, one pipe buffer per call, instead of 4 KiB ones (default N)");

/*
 * What the module chose: read-only attributes of the device in policy/,
 * one value each (Documentation/filesystems/sysfs.rst; docs/sysfs.md,
 * docs/ABI/), world-readable as the parameters that set them are.  Why
 * it chose so is free text, in debugfs (fastzero/reasons).
 */
static ssize_t clear_user_variant_show(struct device *dev,
				       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", fz_loop_names[fz_clear_user_selected()]);
}
static DEVICE_ATTR_RO(clear_user_variant);

static ssize_t read_extent_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%zu\n", fz_read_extent(NULL));
}
static DEVICE_ATTR_RO(read_extent);

static ssize_t preempt_model_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", fz_preempt_model());
}
static DEVICE_ATTR_RO(preempt_model);

static ssize_t splice_unit_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%zu\n", fz_splice_unit());
}
static DEVICE_ATTR_RO(splice_unit);

const char *fz_source(bool from_param)
{
	return from_param ? "parameter" : "derived";
}

static ssize_t nt_threshold_source_show(struct device *dev,
					struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  fz_source(READ_ONCE(fz_nt_threshold_why) == fz_set_by_param));
}
static DEVICE_ATTR_RO(nt_threshold_source);

static ssize_t cold_threshold_source_show(struct device *dev,
					  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  fz_source(READ_ONCE(fz_cold_threshold_set_by_param)));
}
static DEVICE_ATTR_RO(cold_threshold_source);

static ssize_t cold_variant_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	enum fz_loop loop = READ_ONCE(fz_cold_loop);

	return sysfs_emit(buf, "%s\n",
			  loop == FZ_LOOP_AUTO ? "none" : fz_loop_names[loop]);
}
static DEVICE_ATTR_RO(cold_variant);

static struct attribute *fz_common_policy_attrs[] = {
	&dev_attr_clear_user_variant.attr,
	&dev_attr_read_extent.attr,
	&dev_attr_preempt_model.attr,
	&dev_attr_splice_unit.attr,
	&dev_attr_nt_threshold_source.attr,
	&dev_attr_cold_threshold_source.attr,
	&dev_attr_cold_variant.attr,
};

/*
 * policy/ is one directory: the attributes above, then the architecture's
 * (arch.h), put together at load, before the device is registered.
 */
static struct attribute *fz_policy_attrs[ARRAY_SIZE(fz_common_policy_attrs) +
					 FZ_ARCH_NR_POLICY_ATTRS + 1];

static void fz_policy_attrs_init(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(fz_common_policy_attrs); i++)
		fz_policy_attrs[n++] = fz_common_policy_attrs[i];
	for (i = 0; i < FZ_ARCH_NR_POLICY_ATTRS; i++)
		fz_policy_attrs[n++] = fz_arch_policy_attrs[i];
	fz_policy_attrs[n] = NULL;
}

/*
 * fastzero/reasons in debugfs: each choice of policy/ with the rule or
 * measurement behind it, one "name: reason" line each.  Mode 0444 with no
 * ioctl or mmap, so lockdown's integrity mode leaves it readable.
 */
static int fz_reasons_show(struct seq_file *m, void *unused)
{
	const char *why;

	fz_read_extent(&why);
	seq_printf(m, "read_extent: %s\n", why);
	seq_printf(m, "nt_threshold: %s\n", READ_ONCE(fz_nt_threshold_why));
	seq_printf(m, "cold_variant: %s\n", READ_ONCE(fz_cold_why));
	if (READ_ONCE(fz_cold_threshold_set_by_param))
		seq_puts(m, "cold_threshold: set by parameter\n");
	else
		seq_printf(m, "cold_threshold: derived: %lu: %s\n", FZ_COLD_THRESHOLD,
			   "the open file's streamed bytes decide whether the memory is cold");
	fz_arch_reasons_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(fz_reasons);

static struct dentry *fz_debugfs;

static const struct attribute_group fz_policy_group = {
	.name = "policy",
	.attrs = fz_policy_attrs,
};

static const struct attribute_group *fz_groups[] = {
	&fz_stats_group,
	&fz_policy_group,
	NULL,
};

static struct miscdevice fz_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "fastzero",
	.fops	= &fz_fops,
	.mode	= 0666,
	.groups	= fz_groups,
};

/*
 * What the CPU's rules chose (arch.h), where a parameter did not set it;
 * the cache and rule behind nt_threshold go in its reason.
 */
static void fz_thresholds_init(void)
{
	struct fz_arch_choice c;

	fz_arch_init(&c);
	WRITE_ONCE(fz_cold_loop, c.cold_loop);
	WRITE_ONCE(fz_cold_why, c.cold_why);
	if (!fz_nt_threshold_why) {
		fz_nt_threshold = c.nt_threshold;
		WRITE_ONCE(fz_nt_threshold_why, c.nt_why);
	}
}

static int __init fz_init(void)
{
	int ret;

	fz_thresholds_init();
	fz_policy_attrs_init();
	ret = fz_splice_init(fz_splice_huge);
	if (ret)
		return ret;
	ret = fz_shmem_mount();
	if (ret)
		goto err_splice;
	ret = misc_register(&fz_misc);
	if (ret)
		goto err_mount;
	/* debugfs failures are not the load's (debugfs.h) */
	fz_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("reasons", 0444, fz_debugfs, NULL, &fz_reasons_fops);
	pr_info("clear_user: %s, nt_threshold %lu, cold %s, read extent %zu (%s), shared huge=%s cleared by %s, splice buffers %zu\n",
		fz_loop_names[fz_clear_user_selected()], fz_nt_threshold,
		fz_cold_loop == FZ_LOOP_AUTO ? "none" : fz_loop_names[fz_cold_loop],
		fz_read_extent(NULL), fz_preempt_model(),
		fz_shared_huge_names[fz_shared_huge],
		fz_shared_clear_names[fz_shared_clear], fz_splice_unit());
	return 0;

err_mount:
	fz_shmem_unmount();
err_splice:
	fz_splice_exit();
	return ret;
}

static void __exit fz_exit(void)
{
	debugfs_remove(fz_debugfs);
	misc_deregister(&fz_misc);
	fz_shmem_unmount();
	fz_splice_exit();
}

module_init(fz_init);
module_exit(fz_exit);

MODULE_DESCRIPTION("/dev/fastzero: a faster /dev/zero");
MODULE_VERSION(FZ_VERSION);	/* dkms.conf's PACKAGE_VERSION, via driver/Kbuild */
MODULE_AUTHOR("fastzero developers");
MODULE_LICENSE("GPL");
