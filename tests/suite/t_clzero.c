// SPDX-License-Identifier: GPL-2.0
/*
 * t_clzero - the clzero variant is proven at load by running it, or refused.
 *
 * The module is reloaded with force_variant=clzero.  Where the guest's
 * CPUID does not report CLZERO (QEMU's TCG filters it and executes it as
 * #UD; any Intel CPU), the load-time self-test must trap, and the module
 * must load all the same, say why in policy/clzero and in one
 * kernel log line (not a WARN or an oops: the harness fails a boot with
 * those), leave force_variant at auto, refuse clzero when it is written
 * later, and read zeros with every other variant.  Where CPUID reports it
 * and the CPU runs it, the variant must be usable and its reads, faults
 * into a PROT_NONE page included, must match /dev/zero.  Then the module
 * is reloaded as the harness loaded it, and the store for cold
 * destinations checked: cold_variant is policy.h's for this CPU's vendor,
 * and reads that each start where the last ended (the ones it serves,
 * with cold_threshold lowered to one page) match /dev/zero.  Last, the
 * load does not depend on the task that loads: a child at its RLIMIT_AS,
 * under MDWE, with READ_IMPLIES_EXEC, at vm.max_map_count or with a signal
 * pending loads the module, which chooses what it chose for the harness.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fztest.h"

static int dev, ref;
static const char refused_log[] = "fastzero: force_variant=clzero refused: ";

static int cpuid_has_clzero(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000008, &a, &b, &c, &d) && (b & 1);
}

static int test_refused(const void *arg, char *why)
{
	char val[64], reason[256];

	(void)arg;
	if (fz_read_file(FZ_POLICY "/clzero", val, sizeof(val)))
		return fz_fail(why, "policy/clzero not readable");
	if (fz_reason("clzero", reason, sizeof(reason)))
		return fz_fail(why, "no clzero line in " FZ_REASONS);
	fz_diag("  clzero: %s: %s", val, reason);
	if (strcmp(val, "refused") ||
	    !strstr(reason, "refused: the load-time self-test trapped (#UD"))
		return fz_fail(why, "clzero \"%s\" (%s), want the self-test's #UD refusal",
			       val, reason);
	return FZ_PASS;
}

/* Where the CPU runs it: usable, and the forced variant in place. */
static int test_usable(const void *arg, char *why)
{
	char val[256], forced[64];

	(void)arg;
	if (fz_read_file(FZ_POLICY "/clzero", val, sizeof(val)) ||
	    fz_read_file(FZ_PARAMS "/force_variant", forced, sizeof(forced)))
		return fz_fail(why, "clzero or force_variant not readable");
	fz_diag("  clzero: %s", val);
	if (strcmp(val, "usable") || strcmp(forced, "clzero"))
		return fz_fail(why, "clzero says \"%s\", force_variant \"%s\"", val, forced);
	return FZ_PASS;
}

static int test_force_auto(const void *arg, char *why)
{
	char val[64];

	(void)arg;
	if (fz_read_file(FZ_PARAMS "/force_variant", val, sizeof(val)))
		return fz_fail(why, "force_variant not readable");
	if (strcmp(val, "auto"))
		return fz_fail(why, "force_variant is \"%s\" after the refusal, want auto", val);
	return FZ_PASS;
}

static int test_write_refused(const void *arg, char *why)
{
	int err = fz_write_file(FZ_PARAMS "/force_variant", "clzero");

	(void)arg;
	if (err != -EOPNOTSUPP)
		return fz_fail(why, "writing clzero to force_variant: %s, want EOPNOTSUPP",
			       err ? strerror(-err) : "accepted");
	return FZ_PASS;
}

/* Exactly one kernel log line, since the reload, says why. */
static int test_log_line(const void *arg, char *why)
{
	int warned = 0, lines = fz_klog_count(arg, refused_log, &warned);

	if (lines == -2)
		return fz_fail(why, "klogctl: %s", strerror(errno));
	if (lines == -1)
		return fz_fail(why, "the test's marker is not in the kernel log");
	if (warned)
		return fz_fail(why, "a WARNING in the kernel log after the reload");
	if (lines != 1)
		return fz_fail(why, "%d lines \"%s...\" after the reload, want 1", lines,
			       refused_log);
	return FZ_PASS;
}

/* What the module chose at load, for the loader tests to compare. */
static const char *const choices[] = { "clzero", "cold_variant", "clear_user_variant" };
static char chosen[FZ_ARRAY_SIZE(choices)][512];

static int read_choices(char out[][512])
{
	char path[128];
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(choices); i++) {
		snprintf(path, sizeof(path), FZ_POLICY "/%s", choices[i]);
		if (fz_read_file(path, out[i], sizeof(out[i])))
			return -1;
	}
	return 0;
}

/* Each sets one condition of the loading task: 0, or -errno if the kernel has none. */
static int cond_rlimit_as(void)
{
	unsigned long pages = 0;
	struct rlimit r;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%lu", &pages) != 1)
		return -EIO;
	fclose(f);
	/* no room for one more mapping */
	r.rlim_cur = r.rlim_max = pages * fz_page;
	return setrlimit(RLIMIT_AS, &r) ? -errno : 0;
}

static int cond_mdwe(void)
{
	/* PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN: 6.3+ */
	return prctl(65, 1, 0, 0, 0) ? -errno : 0;
}

static int cond_read_implies_exec(void)
{
	return personality(READ_IMPLIES_EXEC) < 0 ? -errno : 0;
}

static int cond_signal_pending(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	return raise(SIGUSR1) ? -errno : 0;
}

/* vm.max_map_count at the task's own count: set here, restored by the parent. */
static char max_map_count[32];

static int cond_max_map_count(void)
{
	char line[512], val[32];
	unsigned int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	snprintf(val, sizeof(val), "%u", n);
	return fz_write_file("/proc/sys/vm/max_map_count", val);
}

struct loader {
	const char *name;
	int (*set)(void);
};

static const struct loader loaders[] = {
	{ "at_its_rlimit_as", cond_rlimit_as },
	{ "under_mdwe", cond_mdwe },
	{ "with_read_implies_exec", cond_read_implies_exec },
	{ "with_a_signal_pending", cond_signal_pending },
	{ "at_vm_max_map_count", cond_max_map_count },
};

/* The child: exit 0 loaded, 2 the kernel lacks the condition, 1 failed. */
static void load_as(void *arg)
{
	const struct loader *l = arg;
	int err = l->set();

	if (err)
		_exit(err == -EINVAL ? 2 : 3);
	_exit(fz_reload_module("", NULL) ? 1 : 0);
}

/* The module loads whoever loads it, and chooses what it chose before. */
static int test_loader(const void *arg, char *why)
{
	const struct loader *l = arg;
	char now[FZ_ARRAY_SIZE(choices)][512];
	int st, err;
	size_t i;

	if (dev >= 0)
		close(dev);
	dev = -1;
	st = fz_in_child(load_as, (void *)l);
	if (l->set == cond_max_map_count &&
	    fz_write_file("/proc/sys/vm/max_map_count", max_map_count))
		return fz_fail(why, "vm.max_map_count not restored to %s", max_map_count);
	if (st == 256 + 2) {
		err = fz_reload_module("", &dev);
		return err ? fz_fail(why, "module not restored: %s", strerror(-err)) :
			     fz_skip(why, "the kernel has no such condition (EINVAL)");
	}
	if (st)
		return fz_fail(why, "insmod by that task: %s", st == 256 + 1 ?
			       "failed" : st == 256 + 3 ? "condition not set" : "child died");
	dev = open(fz_dev_path, O_RDWR);
	if (dev < 0)
		return fz_fail(why, "%s not there after the load: %s", fz_dev_path, strerror(errno));
	if (read_choices(now))
		return fz_fail(why, "policy/ not readable");
	for (i = 0; i < FZ_ARRAY_SIZE(choices); i++)
		if (strcmp(now[i], chosen[i]))
			return fz_fail(why, "policy/%s is \"%s\", for the harness \"%s\"",
				       choices[i], now[i], chosen[i]);
	return FZ_PASS;
}

/* cold_variant: what policy.h gives this vendor, with a derived reason. */
static int test_cold_variant(const void *arg, char *why)
{
	char val[64], reason[512], vendor[64] = "", line[256], clz[64] = "";
	const char *want = "none";
	FILE *f = fopen("/proc/cpuinfo", "r");

	(void)arg;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "vendor_id : %63s", vendor) == 1)
			break;
	if (f)
		fclose(f);
	fz_read_file(FZ_POLICY "/clzero", clz, sizeof(clz));
	if (!strcmp(vendor, "GenuineIntel"))
		want = "nt";
	else if ((!strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine")) &&
		 !strcmp(clz, "usable"))
		want = "clzero";
	if (fz_read_file(FZ_POLICY "/cold_variant", val, sizeof(val)))
		return fz_fail(why, "cold_variant not readable");
	if (fz_reason("cold_variant", reason, sizeof(reason)))
		return fz_fail(why, "no cold_variant line in " FZ_REASONS);
	fz_diag("  cold_variant: %s: %s", val, reason);
	if (strcmp(val, want) || strncmp(reason, "derived: ", 9))
		return fz_fail(why, "cold_variant \"%s\" (%s) on %s, want %s, derived",
			       val, reason, vendor, want);
	return FZ_PASS;
}

/*
 * Reads that fill a buffer piece by piece, each where the last ended:
 * the reads the cold store serves.  Odd lengths, so heads and tails are
 * partial; each piece checked against /dev/zero with poisoned guards.
 */
static int test_sequential_fill(const void *arg, char *why)
{
	fz_read_fn fn = *(const fz_read_fn *)arg;
	size_t piece = FZ_MiB + 4096 + 13, len = (fz_quick ? 8 : 32) * FZ_MiB;
	unsigned char *map = fz_mmap(len + 2 * FZ_GUARD, PROT_READ | PROT_WRITE);
	unsigned char *buf;
	size_t off;
	int ret = FZ_PASS;

	if (!map)
		return fz_fail(why, "mmap: %s", strerror(errno));
	buf = map + FZ_GUARD;
	for (off = 0; off + piece <= len && ret == FZ_PASS; off += piece)
		ret = fz_diff_read(dev, ref, fn, buf + off, piece, buf + off,
				   buf + off + piece + FZ_GUARD, piece, why);
	fz_munmap(map, len + 2 * FZ_GUARD);
	return ret;
}

/* Every other variant still reads zeros (the compact differential set). */
static void other_variants(void)
{
	static const char *const variants[] = {
		"unrolled", "rep_stosq", "erms", "rep_stosb", "nt", "auto",
	};
	char prefix[64];
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(variants); i++) {
		int err = fz_write_file(FZ_PARAMS "/force_variant", variants[i]);

		snprintf(prefix, sizeof(prefix), "after_refusal_force_variant_%s_set",
			 variants[i]);
		fz_report(err ? FZ_FAIL : FZ_PASS, prefix, err ? strerror(-err) : NULL);
		if (err)
			continue;
		snprintf(prefix, sizeof(prefix), "after_refusal_%s_read", variants[i]);
		fz_compact_checks(dev, ref, fz_do_read, prefix);
	}
}

int main(int argc, char **argv)
{
	static const fz_read_fn fns[] = { fz_do_read, fz_do_readv3 };
	char marker[64];
	size_t i;
	int err;

	fz_setup(argc, argv, &dev, &ref);
	if (!fz_module) {
		fz_report(FZ_SKIP, "clzero", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
	snprintf(marker, sizeof(marker), "fastzero-test: t_clzero-%d", getpid());
	fz_kmsg(marker + strlen("fastzero-test: "));
	err = fz_reload_module("force_variant=clzero", &dev);
	if (err) {
		fz_report(FZ_FAIL, "loads_with_force_variant_clzero", strerror(-err));
		err = fz_reload_module("", &dev);
		if (err)
			fz_report(FZ_FAIL, "module_restored", strerror(-err));
		return fz_exit();
	}
	fz_report(FZ_PASS, "loads_with_force_variant_clzero", NULL);
	if (cpuid_has_clzero() && !fz_file_has_word(FZ_POLICY "/clzero", "refused")) {
		fz_run(test_usable, NULL, "cpu_with_clzero_passes_the_self_test");
		fz_compact_checks(dev, ref, fz_do_read, "clzero_read");
		fz_compact_checks(dev, ref, fz_do_readv3, "clzero_readv3");
	} else {
		/* CPUID without it, or with it but the CPU trapped: refused */
		fz_run(test_refused, NULL, "forced_clzero_self_test_traps_and_is_refused_in_sysfs");
		fz_run(test_log_line, marker, "refusal_is_one_kernel_log_line");
		fz_run(test_force_auto, NULL, "force_variant_falls_back_to_auto");
		fz_run(test_write_refused, NULL, "force_variant_clzero_refused_later");
		other_variants();
	}
	err = fz_reload_module("", &dev);
	if (err) {
		fz_report(FZ_FAIL, "module_restored", strerror(-err));
		return fz_exit();
	}
	fz_run(test_cold_variant, NULL, "cold_variant_is_policy_for_this_vendor");
	err = fz_write_file(FZ_PARAMS "/cold_threshold", "4096");
	fz_report(err ? FZ_FAIL : FZ_PASS, "cold_threshold_set_4096", err ? strerror(-err) : NULL);
	fz_run(test_sequential_fill, &fns[0], "sequential_fill_read_matches_dev_zero");
	fz_run(test_sequential_fill, &fns[1], "sequential_fill_readv3_matches_dev_zero");
	err = fz_reload_module("", &dev);
	if (err) {
		fz_report(FZ_FAIL, "module_restored", strerror(-err));
		return fz_exit();
	}
	if (read_choices(chosen) ||
	    fz_read_file("/proc/sys/vm/max_map_count", max_map_count, sizeof(max_map_count))) {
		fz_report(FZ_FAIL, "policy_and_max_map_count_readable", strerror(errno));
		return fz_exit();
	}
	for (i = 0; i < FZ_ARRAY_SIZE(loaders); i++)
		fz_run(test_loader, &loaders[i], "loads_and_chooses_the_same_%s", loaders[i].name);
	err = dev < 0 ? fz_reload_module("", &dev) : 0;
	if (err)
		fz_report(FZ_FAIL, "module_restored", strerror(-err));
	return fz_exit();
}
