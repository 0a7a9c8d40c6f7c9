// SPDX-License-Identifier: GPL-2.0
/*
 * t_clzero - what a load chooses: clzero (x86-64) proven or refused, the cold store, whoever loads.
 *
 * On x86-64 the module is reloaded with force_variant=clzero.  Where the guest's
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
 * under MDWE, with READ_IMPLIES_EXEC, at vm.max_map_count, with a signal
 * pending or in a memory cgroup at its limit loads the module, and so does
 * the modprobe a kernel thread starts for request_module() (this program
 * again, as /proc/sys/kernel/modprobe); each time the module chooses what
 * it chose for the harness.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fzarch.h"
#include "fztest.h"

static int dev, ref;

#ifdef __x86_64__
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
#endif

/* What the module chooses at load, which no loader may change. */
static const char *const choices[] = {
	"cold_variant", "clear_user_variant",
#ifdef __x86_64__
	"clzero",
#endif
};
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

#define CG_LOADER	"/sys/fs/cgroup/fz_loader"

/*
 * In a memory cgroup of its own whose memory.max is what it holds: every
 * charge of the load beyond that fails (no swap to reclaim to).
 */
static int cond_memcg_at_limit(void)
{
	char why[FZ_WHYLEN], val[32];
	int ret = fz_memcg_create(CG_LOADER, why);

	if (ret != FZ_PASS)
		return ret == FZ_SKIP ? -EINVAL : -EIO;
	snprintf(val, sizeof(val), "%d", getpid());
	if (fz_write_file(CG_LOADER "/cgroup.procs", val) ||
	    fz_write_file(CG_LOADER "/memory.swap.max", "0") ||
	    fz_read_file(CG_LOADER "/memory.current", val, sizeof(val)))
		return -EIO;
	return fz_write_file(CG_LOADER "/memory.max", val);
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
	{ "in_a_memcg_at_its_limit", cond_memcg_at_limit },
};

/*
 * The child, with the module file open and the module unloaded first:
 * exit 0 loaded, 2 the kernel lacks the condition, 3 it was not set, 4 no
 * module file, 64 + errno the load failed.
 */
static void load_as(void *arg)
{
	const struct loader *l = arg;
	int fd = fz_module_open(), err;

	if (fd < 0 || (fz_delete_module("fastzero", O_NONBLOCK) && errno != ENOENT))
		_exit(4);
	err = l->set();
	if (err)
		_exit(err == -EINVAL ? 2 : 3);
	err = fz_module_load_fd(fd, "");
	_exit(err ? 64 + (-err & 63) : 0);
}

/* Loaded again: the device there, and the same choices as for the harness. */
static int check_reloaded(char *why)
{
	char now[FZ_ARRAY_SIZE(choices)][512];
	size_t i;

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

/* The module loads whoever loads it, and chooses what it chose before. */
static int test_loader(const void *arg, char *why)
{
	const struct loader *l = arg;
	int st, err;

	if (dev >= 0)
		close(dev);
	dev = -1;
	st = fz_in_child(load_as, (void *)l);
	if (l->set == cond_max_map_count &&
	    fz_write_file("/proc/sys/vm/max_map_count", max_map_count))
		return fz_fail(why, "vm.max_map_count not restored to %s", max_map_count);
	if (l->set == cond_memcg_at_limit && rmdir(CG_LOADER) && errno != ENOENT)
		return fz_fail(why, "rmdir " CG_LOADER ": %s", strerror(errno));
	if (st == 256 + 2) {
		err = fz_reload_module("", &dev);
		return err ? fz_fail(why, "module not restored: %s", strerror(-err)) :
			     fz_skip(why, "the kernel has no such condition (EINVAL)");
	}
	if (st >= 256 + 64)
		return fz_fail(why, "insmod by that task: %s", strerror(st - 256 - 64));
	if (st)
		return fz_fail(why, "insmod by that task: %s", st == 256 + 3 ?
			       "condition not set" : st == 256 + 4 ? "module file or rmmod" :
			       "child died");
	return check_reloaded(why);
}

/*
 * request_module() runs /proc/sys/kernel/modprobe from a kernel thread:
 * the test points it at this program, which then loads the module from
 * what the test left in HELPER_ARGS (the helper's environment is the
 * kernel's own) and writes to HELPER_RC the result, whether its parent is
 * a kernel thread (an empty cmdline) and the parent's name.
 * mount() of an unknown filesystem type asks for module fs-HELPER_FS.
 */
#define HELPER_FS	"fastzero-loader-test"
#define HELPER_ARGS	"/tmp/fz-modprobe.args"
#define HELPER_RC	"/tmp/fz-modprobe.rc"

/* @text into a new file at @path (fz_write_file() is for existing ones): 0 or -1. */
static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

static int modprobe_helper(int argc, char **argv)
{
	char ko[512] = "", params[512] = "", comm[64] = "?", path[64], out[128];
	FILE *f;
	int err, kthread;

	/* another request in the meantime: not ours, "not found" as modprobe says */
	if (strcmp(argv[argc - 1], "fs-" HELPER_FS))
		return 1;
	f = fopen(HELPER_ARGS, "r");
	if (!f || !fgets(ko, sizeof(ko), f))
		return 1;
	if (!fgets(params, sizeof(params), f))
		params[0] = '\0';
	fclose(f);
	ko[strcspn(ko, "\n")] = '\0';
	params[strcspn(params, "\n")] = '\0';
	setenv("FZ_KO", ko, 1);
	setenv("FZ_MODULE_PARAMS", params, 1);
	err = fz_load_module("");
	snprintf(path, sizeof(path), "/proc/%d/cmdline", getppid());
	f = fopen(path, "r");
	kthread = f && fgetc(f) == EOF;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/comm", getppid());
	fz_read_file(path, comm, sizeof(comm));
	snprintf(out, sizeof(out), "%d %d %s", -err, kthread, comm);
	return put_file(HELPER_RC, out) ? 1 : 0;
}

static int test_kthread_loader(const void *arg, char *why)
{
	char exe[512], old[512], args[1100], rc[128] = "", comm[64] = "";
	int kthread = 0;
	const char *ko = getenv("FZ_KO"), *params = getenv("FZ_MODULE_PARAMS");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int err = 0, restored;

	(void)arg;
	if (n <= 0 || fz_read_file("/proc/sys/kernel/modprobe", old, sizeof(old)))
		return fz_fail(why, "this program's path or the modprobe path not readable");
	exe[n] = '\0';
	snprintf(args, sizeof(args), "%s\n%s\n", ko && *ko ? ko : "/fastzero.ko",
		 params ? params : "");
	unlink(HELPER_RC);
	if (put_file(HELPER_ARGS, args))
		return fz_fail(why, "%s not written", HELPER_ARGS);
	if (dev >= 0)
		close(dev);
	dev = -1;
	if (fz_delete_module("fastzero", O_NONBLOCK) && errno != ENOENT)
		return fz_fail(why, "rmmod: %s", strerror(errno));
	if (fz_write_file("/proc/sys/kernel/modprobe", exe))
		return fz_fail(why, "/proc/sys/kernel/modprobe not set");
	if (!mount("none", "/tmp", HELPER_FS, 0, NULL))
		err = EEXIST;
	else if (errno != ENODEV)
		err = errno;
	restored = fz_write_file("/proc/sys/kernel/modprobe", old);
	unlink(HELPER_ARGS);
	if (restored)
		return fz_fail(why, "/proc/sys/kernel/modprobe not restored to %s", old);
	if (err)
		return fz_fail(why, "mount -t " HELPER_FS ": %s, want ENODEV", strerror(err));
	if (fz_read_file(HELPER_RC, rc, sizeof(rc)) ||
	    sscanf(rc, "%d %d %63s", &err, &kthread, comm) != 3)
		return fz_fail(why, "request_module() did not run the helper (no %s)", HELPER_RC);
	unlink(HELPER_RC);
	fz_diag("  loaded by modprobe, a child of %s", comm);
	if (err)
		return fz_fail(why, "insmod from request_module(): %s", strerror(err));
	if (!kthread)
		return fz_fail(why, "the helper's parent %s is not a kernel thread", comm);
	return check_reloaded(why);
}

/* cold_variant: what policy.h gives this vendor, with a derived reason. */
static int test_cold_variant(const void *arg, char *why)
{
	char val[64], reason[512];
	const char *rule, *want = fz_loop_name(fz_arch_cold_loop(&rule));

	(void)arg;
	if (!strcmp(want, "auto"))
		want = "none";
	if (fz_read_file(FZ_POLICY "/cold_variant", val, sizeof(val)))
		return fz_fail(why, "cold_variant not readable");
	if (fz_reason("cold_variant", reason, sizeof(reason)))
		return fz_fail(why, "no cold_variant line in " FZ_REASONS);
	fz_diag("  cold_variant: %s: %s", val, reason);
	if (strcmp(val, want) || strcmp(reason, rule))
		return fz_fail(why, "cold_variant \"%s\" (%s), cpu_policy.h says %s (%s)",
			       val, reason, want, rule);
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

#ifdef __x86_64__
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

/* force_variant=clzero at load: proven and used, or refused and said so. */
static void forced_clzero(void)
{
	char marker[64];
	int err;

	snprintf(marker, sizeof(marker), "fastzero-test: t_clzero-%d", getpid());
	fz_kmsg(marker + strlen("fastzero-test: "));
	err = fz_reload_module("force_variant=clzero", &dev);
	if (err) {
		fz_report(FZ_FAIL, "loads_with_force_variant_clzero", strerror(-err));
		return;
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
}
#endif

int main(int argc, char **argv)
{
	static const fz_read_fn fns[] = { fz_do_read, fz_do_readv3 };
	size_t i;
	int err;

	if (argc > 1 && !strcmp(argv[1], "-q"))	/* as modprobe, for request_module() */
		return modprobe_helper(argc, argv);
	fz_setup(argc, argv, &dev, &ref);
	if (!fz_module) {
		fz_report(FZ_SKIP, "clzero", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
#ifdef __x86_64__
	forced_clzero();
#endif
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
	fz_run(test_kthread_loader, NULL, "loads_and_chooses_the_same_from_request_module");
	err = dev < 0 ? fz_reload_module("", &dev) : 0;
	if (err)
		fz_report(FZ_FAIL, "module_restored", strerror(-err));
	return fz_exit();
}
