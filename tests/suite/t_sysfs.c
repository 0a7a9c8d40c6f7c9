// SPDX-License-Identifier: GPL-2.0
/*
 * t_sysfs - module parameters of fastzero, and what it chose (policy/):
 *
 *	force_variant (rw)	override: auto, or a loop's name (FZ_LOOP_NAMES)
 *	chunk_size (rw)		bytes cleared between rescheduling points
 *	nt_threshold (rw)	reads from this size on use non-temporal stores
 *	erms_threshold (ro)	x86-64: shortest clear the erms variant does with rep stosb
 *	shared_huge (ro)	tmpfs huge= policy of MAP_SHARED memory
 *	policy/clear_user_variant	the clear loop chosen for this CPU
 *	policy/ *_threshold_source	derived or parameter (the rule: debugfs)
 *
 * Every forced variant and a small and a big chunk size are exercised with
 * the compact differential checks (including reads running into a
 * PROT_NONE page, i.e. each loop's fault fixup).  Parameters are restored.
 * A value refused at run time says why in the kernel log.  The parameters
 * are only the administrator's knobs (the list in docs/sysfs.md); the
 * policy/ attributes are read-only and hold one value each, their reasons
 * are in debugfs (fastzero/reasons).
 *
 * FZ_EXPECT_VARIANT overrides the variant expected from /proc/cpuinfo.
 * The derived thresholds are recomputed here with driver/policy.h, the
 * driver's own rule, from what userspace sees of the CPU (fzarch.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fzarch.h"
#include "fztest.h"

static int dev, ref;
/* The loops, as the driver names them (its clear_loops.h). */
static const char *const variants[] = FZ_LOOP_NAMES;

/* What the module chose: policy/, beside stats/ (docs/sysfs.md). */
static const char *const policy_attrs[] = {
	"clear_user_variant", "read_extent", "preempt_model", "splice_unit",
	"nt_threshold_source", "cold_threshold_source", "cold_variant",
	FZ_ARCH_POLICY_ATTRS
};

/* The administrator's knobs: every other name is a policy/ attribute. */
static const char *const knobs[] = {
	"chunk_size", "nt_threshold", "force_variant", "shared_huge",
	"shared_clear", "splice_huge", "cold_threshold", FZ_ARCH_KNOBS
};

static int is_policy(const char *name)
{
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(policy_attrs); i++)
		if (!strcmp(name, policy_attrs[i]))
			return 1;
	return 0;
}

static int param_read(const char *name, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s",
		 is_policy(name) ? FZ_POLICY : FZ_PARAMS, name);
	return fz_read_file(path, buf, len);
}

static int param_write(const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s",
		 is_policy(name) ? FZ_POLICY : FZ_PARAMS, name);
	return fz_write_file(path, val);
}

/*
 * A threshold the module derived must be what policy.h derives from this
 * CPU, within bounds, policy/NAME_source "derived" and the rule its
 * reason in debugfs; one set by a parameter (FZ_INSMOD_ARGS) says so.
 */
static int check_threshold(const char *name, unsigned long want,
			   const char *want_why, unsigned long max, char *why)
{
	char val[64], reason[512], sname[64], src[32];
	unsigned long v;

	snprintf(sname, sizeof(sname), "%s_source", name);
	if (param_read(name, val, sizeof(val)) || sscanf(val, "%lu", &v) != 1)
		return fz_fail(why, "%s not readable as a number", name);
	if (param_read(sname, src, sizeof(src)))
		return fz_fail(why, "policy/%s not readable", sname);
	if (fz_reason(name, reason, sizeof(reason)))
		return fz_fail(why, "no %s line in " FZ_REASONS, name);
	fz_diag("  %s %lu, %s: %s", name, v, src, reason);
	if (v > max)
		return fz_fail(why, "%s %lu above %lu", name, v, max);
	if (!strcmp(src, "parameter"))
		return strcmp(reason, "set by parameter") ?
		       fz_fail(why, "%s given, its reason is \"%s\"", name, reason) : FZ_PASS;
	if (strcmp(src, "derived"))
		return fz_fail(why, "policy/%s is \"%s\"", sname, src);
	if (strncmp(reason, want_why, strlen(want_why)))
		return fz_fail(why, "%s's reason is \"%s\", policy.h says \"%s\"", name,
			       reason, want_why);
	if (v != want)
		return fz_fail(why, "%s %lu, policy.h derives %lu from this CPU",
			       name, v, want);
	return FZ_PASS;
}

#ifdef __x86_64__
static int test_erms_threshold(const void *arg, char *why)
{
	struct fz_cpu cpu;
	const char *rule;
	unsigned long want;

	(void)arg;
	fz_read_cpu(&cpu);
	want = fz_policy_erms_threshold(&cpu, &rule);
	return check_threshold("erms_threshold", want, rule, 4096, why);
}
#endif

/* 0 (never) or from 0x4040 bytes (glibc's minimum) to 1 GiB. */
static int test_nt_threshold_derived(const void *arg, char *why)
{
	struct fz_cpu cpu;
	const char *rule;
	unsigned long want;
	char val[64], seen[256];
	int ret;

	(void)arg;
	fz_read_cpu(&cpu);
	fz_arch_cpu_str(&cpu, seen, sizeof(seen));
	fz_diag("  CPU: %s", seen);
	want = fz_policy_nt_threshold(&cpu, fz_arch_cold_ok(), &rule);
	ret = check_threshold("nt_threshold", want, rule, FZ_GiB, why);
	if (ret != FZ_PASS || param_read("nt_threshold", val, sizeof(val)))
		return ret;
	if (strcmp(val, "0") && strtoul(val, NULL, 0) < 0x4040)
		return fz_fail(why, "nt_threshold %s below glibc's minimum 0x4040", val);
	return FZ_PASS;
}

/* The loop fz_clear_user() should run on this CPU: cpu_policy.h's. */
static const char *expected_variant(void)
{
	const char *env = getenv("FZ_EXPECT_VARIANT");
	struct fz_cpu cpu;

	if (env && *env)
		return env;
	fz_read_cpu(&cpu);
	return fz_loop_name(fz_policy_variant(&cpu));
}

static int check_param(const char *name, const char *want, char *why)
{
	char val[64];
	int err = param_read(name, val, sizeof(val));

	if (err)
		return fz_fail(why, "read %s: %s", name, strerror(-err));
	if (strcmp(val, want))
		return fz_fail(why, "%s is \"%s\", expected \"%s\"", name, val, want);
	return FZ_PASS;
}

static int test_variant(const void *arg, char *why)
{
	char val[64];
	size_t i;
	int err = param_read("clear_user_variant", val, sizeof(val));

	(void)arg;
	if (err)
		return fz_fail(why, "read clear_user_variant: %s", strerror(-err));
	for (i = 0; i < FZ_ARRAY_SIZE(variants); i++)
		if (!strcmp(val, variants[i]))
			break;
	if (i == FZ_ARRAY_SIZE(variants))
		return fz_fail(why, "clear_user_variant is \"%s\", no loop's name", val);
	return check_param("clear_user_variant", expected_variant(), why);
}

/* Write @val to @name; it must read back as @val. */
static int test_set(const void *arg, char *why)
{
	const char *const *nv = arg;
	int err = param_write(nv[0], nv[1]);

	if (err)
		return fz_fail(why, "write \"%s\" to %s: %s", nv[1], nv[0],
			       strerror(-err));
	return check_param(nv[0], nv[1], why);
}

/*
 * Writing @val (NULL: the value it has) to @name must fail, with @err if
 * not 0, and change nothing; with @want, @name must read so first.
 */
static int write_refused(const char *name, const char *val, const char *want,
			 int err, char *why)
{
	char before[64];
	int ret;

	if (param_read(name, before, sizeof(before)))
		return fz_fail(why, "cannot read %s", name);
	if (want && strcmp(before, want))
		return fz_fail(why, "%s is \"%s\", expected \"%s\"", name,
			       before, want);
	ret = param_write(name, val ? val : before);
	if (!ret || (err && ret != -err))
		return fz_fail(why, "write returned %s, expected %s",
			       ret ? strerror(-ret) : "success",
			       err ? strerror(err) : "an error");
	return check_param(name, before, why);
}

/* Writing @val to @name must fail with EINVAL and change nothing. */
static int test_reject(const void *arg, char *why)
{
	const char *const *nv = arg;

	return write_refused(nv[0], nv[1], NULL, EINVAL, why);
}

/* A loop this CPU does not run: force_variant refuses it (EOPNOTSUPP). */
static int test_refused_loop(const void *arg, char *why)
{
	const char *const *nv = arg;

	return write_refused(nv[0], nv[1], NULL, EOPNOTSUPP, why);
}

/* Set a parameter, then run the compact differential checks. */
static void set_and_check(const char *name, const char *val, const char *tag)
{
	const char *nv[2] = { name, val };
	char prefix[64];

	fz_run(test_set, nv, "%s_set_%s", tag, val);
	snprintf(prefix, sizeof(prefix), "%s_%s_read", tag, val);
	fz_compact_checks(dev, ref, fz_do_read, prefix);
	snprintf(prefix, sizeof(prefix), "%s_%s_readv3", tag, val);
	fz_compact_checks(dev, ref, fz_do_readv3, prefix);
}

/* Reads of at least nt_threshold bytes take the non-temporal loop. */
static void test_nt_threshold(const char *val)
{
	set_and_check("nt_threshold", val, "nt_threshold");
}

/*
 * read_extent with chunk_size 0: every read starts with a probe of
 * FZ_EXTENT_PROBE bytes on every preemption model (policy.h: later
 * extents follow the read's own rate), and the model is one the kernel
 * can run.
 */
static int test_read_extent(const void *arg, char *why)
{
	static const char *const models[] = { "none", "voluntary", "full", "lazy", "rt" };
	char val[64], model[32] = "", reason[256];
	unsigned long extent;
	size_t i;

	(void)arg;
	if (param_read("read_extent", val, sizeof(val)) ||
	    param_read("preempt_model", model, sizeof(model)))
		return fz_fail(why, "read_extent or preempt_model not readable");
	if (fz_reason("read_extent", reason, sizeof(reason)))
		return fz_fail(why, "no read_extent line in " FZ_REASONS);
	fz_diag("  read_extent %s, preempt_model %s: %s", val, model, reason);
	if (sscanf(val, "%lu", &extent) != 1)
		return fz_fail(why, "read_extent \"%s\" is not a number", val);
	for (i = 0; i < FZ_ARRAY_SIZE(models) && strcmp(model, models[i]); i++)
		;
	if (i == FZ_ARRAY_SIZE(models))
		return fz_fail(why, "unknown preemption model \"%s\"", model);
	if (extent != FZ_EXTENT_PROBE)
		return fz_fail(why, "%s kernel: first extent %lu, expected %lu",
			       model, extent, FZ_EXTENT_PROBE);
	return FZ_PASS;
}

/*
 * Read-only parameters: what the module chose at load.  Root may open the
 * file for writing; the write itself must fail and change nothing.
 */
static int test_readonly(const void *arg, char *why)
{
	const char *const *nv = arg;

	return write_refused(nv[0], NULL, nv[1], 0, why);
}

/* Run @fn(@val) on parameter @name, then put its old value back. */
static void restore_after(const char *name, const char *val,
			  void (*fn)(const char *val))
{
	const char *nv[2] = { name };
	char old[64];

	if (param_read(name, old, sizeof(old))) {
		fz_report(FZ_FAIL, name, "parameter not readable");
		return;
	}
	fn(val);
	nv[1] = old;
	fz_run(test_set, nv, "%s_restore_%s", name, old);
}

/*
 * The counters move with every user's reads and mappings: readable by root
 * only, as /dev/zero shows nobody anything of the kind.
 */
static int test_stats_private(const void *arg, char *why)
{
	static const char *const names[] = {
		"read_calls", "read_bytes", "read_faults", "read_signals",
		"shared_maps", "private_maps", "splice_copied",
	};
	char path[128];
	struct stat st;
	size_t i;

	(void)arg;
	for (i = 0; i < FZ_ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "/sys/class/misc/fastzero/stats/%s", names[i]);
		if (stat(path, &st))
			return fz_fail(why, "stat %s: %s", path, strerror(errno));
		if ((st.st_mode & 07777) != 0400 || st.st_uid != 0)
			return fz_fail(why, "%s is mode %04o uid %u, expected 0400 root",
				       names[i], st.st_mode & 07777, st.st_uid);
	}
	return FZ_PASS;
}

/*
 * The parameters directory holds the knobs and nothing else; every policy/
 * attribute is there, world-readable and read-only.
 */
static int test_layout(const void *arg, char *why)
{
	char path[256], val[256];
	struct stat st;
	size_t i, n = 0;
	DIR *d = opendir(FZ_PARAMS);
	struct dirent *e;

	(void)arg;
	if (!d)
		return fz_fail(why, "opendir %s: %s", FZ_PARAMS, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		for (i = 0; i < FZ_ARRAY_SIZE(knobs) && strcmp(e->d_name, knobs[i]); i++)
			;
		if (i == FZ_ARRAY_SIZE(knobs)) {
			closedir(d);
			return fz_fail(why, "parameter %s is not an administrator's knob",
				       e->d_name);
		}
		n++;
	}
	closedir(d);
	if (n != FZ_ARRAY_SIZE(knobs))
		return fz_fail(why, "%zu parameters, want %zu", n, FZ_ARRAY_SIZE(knobs));
	for (i = 0; i < FZ_ARRAY_SIZE(policy_attrs); i++) {
		snprintf(path, sizeof(path), FZ_POLICY "/%s", policy_attrs[i]);
		if (stat(path, &st))
			return fz_fail(why, "stat %s: %s", path, strerror(errno));
		if ((st.st_mode & 07777) != 0444)
			return fz_fail(why, "%s is mode %04o, want 0444", path,
				       st.st_mode & 07777);
		/* one value per file (Documentation/filesystems/sysfs.rst) */
		if (fz_read_file(path, val, sizeof(val)) || !val[0] || strpbrk(val, " \t"))
			return fz_fail(why, "%s holds \"%s\", not one value", path, val);
	}
	return FZ_PASS;
}

/* A value written at run time and refused: one kernel log line says why. */
static int test_refusal_logged(const void *arg, char *why)
{
	static const char needle[] = "fastzero: chunk_size=100 refused: ";
	char marker[64];
	int err, lines;

	(void)arg;
	snprintf(marker, sizeof(marker), "fastzero-test: t_sysfs-refusal-%d", getpid());
	fz_kmsg(marker + strlen("fastzero-test: "));
	err = param_write("chunk_size", "100");
	if (err != -EINVAL)
		return fz_fail(why, "chunk_size=100: %s, want EINVAL",
			       err ? strerror(-err) : "accepted");
	lines = fz_klog_count(marker, needle, NULL);
	if (lines < 0)
		return fz_fail(why, "kernel log: %s", lines == -1 ?
			       "the test's marker is not there" : strerror(errno));
	if (lines != 1)
		return fz_fail(why, "%d lines \"%s...\", want 1", lines, needle);
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	/* 0 (sized in time), or 4 KiB (as /dev/zero) to 256 MiB. */
	static const char *const bad_chunks[] = { "1", "abc", "-1", "\n", "12abc",
						  "4095", "268435457", "1073741824" };
	static const char *const chunks[] = { "4096", "8388608", "268435456" };
	const char *nv[2];
	char chunk0[64];
	size_t i;

	fz_setup(argc, argv, &dev, &ref);
	if (!fz_module) {
		fz_report(FZ_SKIP, "sysfs_parameters",
			  "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}

	fz_run(test_layout, NULL, "parameters_are_the_knobs_policy_is_read_only");
	fz_run(test_variant, NULL, "clear_user_variant_is_%s", expected_variant());

	for (i = 0; i < FZ_ARRAY_SIZE(variants); i++) {
		nv[0] = "force_variant";
		nv[1] = variants[i];
		if (fz_arch_runs(variants[i]))
			set_and_check("force_variant", variants[i], "force_variant");
		else
			fz_run(test_refused_loop, nv, "force_variant_%s_refused_on_this_cpu",
			       variants[i]);
	}
	nv[0] = "force_variant";
	nv[1] = "auto";
	fz_run(test_set, nv, "force_variant_restore_auto");
	fz_run(test_variant, NULL, "clear_user_variant_after_auto");
	nv[1] = "bogus";
	fz_run(test_reject, nv, "force_variant_rejects_bogus");

	if (param_read("chunk_size", chunk0, sizeof(chunk0))) {
		fz_report(FZ_FAIL, "chunk_size_readable", strerror(errno));
		return fz_exit();
	}
	fz_diag("chunk_size default: %s", chunk0);
	fz_run(test_read_extent, NULL, "read_extent_first_extent_on_every_preemption_model");
	fz_run(test_refusal_logged, NULL, "chunk_size_refusal_says_why_in_the_kernel_log");
	fz_run(test_stats_private, NULL, "stats_readable_by_root_only");
	for (i = 0; i < FZ_ARRAY_SIZE(chunks); i++)
		set_and_check("chunk_size", chunks[i], "chunk_size");
	nv[0] = "chunk_size";
	for (i = 0; i < FZ_ARRAY_SIZE(bad_chunks); i++) {
		nv[1] = bad_chunks[i];
		fz_run(test_reject, nv, "chunk_size_rejects_%s",
		       i == 3 ? "empty" : bad_chunks[i]);
	}
	nv[1] = chunk0;
	fz_run(test_set, nv, "chunk_size_restore_%s", chunk0);

#ifdef __x86_64__
	fz_run(test_erms_threshold, NULL, "erms_threshold_derived_by_policy");
#endif
	fz_run(test_nt_threshold_derived, NULL, "nt_threshold_derived_by_policy");
	restore_after("nt_threshold", "4096", test_nt_threshold);
	nv[0] = "nt_threshold_source";
	nv[1] = "parameter";
	fz_run(test_readonly, nv, "nt_threshold_source_parameter_read_only");
#ifdef __x86_64__
	nv[0] = "erms_threshold";
	nv[1] = NULL;
	fz_run(test_readonly, nv, "erms_threshold_read_only");
#endif
	nv[0] = "clear_user_variant";
	nv[1] = NULL;
	fz_run(test_readonly, nv, "clear_user_variant_read_only");
	nv[0] = "shared_huge";
	nv[1] = fz_kernel_has_thp() ? "within_size" : "never";
	fz_run(test_readonly, nv, "shared_huge_is_%s_read_only", nv[1]);
	return fz_exit();
}
