// SPDX-License-Identifier: GPL-2.0
/*
 * cpu.c - x86-64: the CPU as cpu_policy.h sees it, and what its rules choose.
 *
 * The vendor, the string-instruction features and the last-level cache
 * decide the erms threshold, the non-temporal threshold and the store for
 * cold destinations (cpu_policy.h); CLZERO is run before it is trusted
 * (clzero.c).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>
#include <asm/cpufeature.h>
#include <asm/processor.h>
#include "arch.h"
#include "compat.h"
#include "fastzero.h"

/* erms_threshold is derived at load unless given then. */
static const char *fz_erms_threshold_why;

static int fz_erms_threshold_set(const char *val, const struct kernel_param *kp)
{
	int ret = fz_param_ulong_set(val, kp);

	if (!ret)
		fz_erms_threshold_why = fz_set_by_param;
	return ret;
}

static const struct kernel_param_ops fz_erms_threshold_ops = {
	.set	= fz_erms_threshold_set,
	.get	= param_get_ulong,
};

module_param_cb(erms_threshold, &fz_erms_threshold_ops, &fz_erms_threshold, 0444);
MODULE_PARM_DESC(erms_threshold,
		 "Shortest length the erms variant clears with rep stosb; default derived from the CPU (x86-64)");

static ssize_t erms_threshold_source_show(struct device *dev,
					  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", fz_source(fz_erms_threshold_why == fz_set_by_param));
}
static DEVICE_ATTR_RO(erms_threshold_source);

static ssize_t clzero_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", fz_clzero_state_name());
}
static DEVICE_ATTR_RO(clzero);

struct attribute *fz_arch_policy_attrs[] = {
	&dev_attr_erms_threshold_source.attr,
	&dev_attr_clzero.attr,
};

static_assert(ARRAY_SIZE(fz_arch_policy_attrs) == FZ_ARCH_NR_POLICY_ATTRS);

static void fz_cpuid(unsigned int leaf, unsigned int sub, unsigned int *r)
{
	cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]);
}

/* The CPU as cpu_policy.h sees it: vendor, features, last-level cache. */
static void fz_cpu_read(struct fz_cpu *cpu)
{
	unsigned int r[4];

	memset(cpu, 0, sizeof(*cpu));
	switch (boot_cpu_data.x86_vendor) {
	case X86_VENDOR_INTEL:
		cpu->vendor = FZ_VENDOR_INTEL;
		break;
	case X86_VENDOR_AMD:
	case X86_VENDOR_HYGON:
		cpu->vendor = FZ_VENDOR_AMD;
		break;
	default:
		cpu->vendor = FZ_VENDOR_OTHER;
	}
	cpu->rep_good = boot_cpu_has(X86_FEATURE_REP_GOOD);
	cpu->erms = boot_cpu_has(X86_FEATURE_ERMS);
	cpu->max_leaf = boot_cpu_data.cpuid_level;
	/* FSRS as the CPU reports it: X86_FEATURE_FSRS is also AMD's FSRM (6.4+) */
	if (cpu->max_leaf >= 7) {
		fz_cpuid(7, 1, r);
		cpu->fsrs = r[0] & FZ_CPUID_7_1_EAX_FSRS;
	}
	fz_cpuid(0x80000000, 0, r);
	cpu->max_ext_leaf = r[0];
	cpu->fallback_kb = max_t(int, boot_cpu_data.x86_cache_size, 0);
	fz_policy_cpu_caches(cpu, fz_cpuid);
}

void fz_arch_init(struct fz_arch_choice *c)
{
	static char nt_why[256];
	enum fz_loop expected, selected = fz_clear_user_selected();
	struct fz_cpu cpu;
	const char *why;
	unsigned long thr;

	fz_clzero_init(fz_forced_loop == FZ_LOOP_CLZERO);
	if (fz_forced_loop == FZ_LOOP_CLZERO && !fz_clzero_usable()) {
		pr_info("force_variant=clzero %s; reads use the patched variant\n",
			fz_clzero_reason());
		fz_forced_loop = FZ_LOOP_AUTO;
	}
	fz_cpu_read(&cpu);
	expected = fz_policy_variant(&cpu);
	if (expected != selected)
		pr_warn("cpu_policy.h expects variant %s, the alternatives chose %s\n",
			fz_loop_names[expected], fz_loop_names[selected]);
	c->cold_loop = fz_policy_cold_loop(&cpu, fz_clzero_usable(), &c->cold_why);
	thr = fz_policy_erms_threshold(&cpu, &why);
	if (!fz_erms_threshold_why) {
		fz_erms_threshold = thr;
		fz_erms_threshold_why = why;
	}
	c->nt_threshold = fz_policy_nt_threshold(&cpu, fz_clzero_usable(), &why);
	snprintf(nt_why, sizeof(nt_why),
		 "%s (last-level cache %lu KiB, %lu KiB per thread, from %s)",
		 why, cpu.llc_size >> 10, cpu.llc_per_thread >> 10, cpu.llc_from);
	c->nt_why = nt_why;
}

const char *fz_arch_loop_refused(enum fz_loop loop)
{
	if (loop == FZ_LOOP_CLZERO && fz_clzero_refused())
		return "the load-time proof refused clzero (policy/clzero)";
	return NULL;
}

void fz_arch_reasons_show(struct seq_file *m)
{
	seq_printf(m, "erms_threshold: %s\n", fz_erms_threshold_why);
	seq_printf(m, "clzero: %s\n", fz_clzero_reason());
}
