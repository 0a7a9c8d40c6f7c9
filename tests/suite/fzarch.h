/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fzarch.h - what the tests know of each architecture's port: its loops,
 * the policy/ attributes and knobs it adds, and the CPU as its cpu.c reads it.
 *
 * The loop names come from the driver's own clear_loops.h (FZ_LOOP_NAMES),
 * the rules from its cpu_policy.h: the tests derive what the module must
 * have chosen with the module's code, from what userspace sees of the CPU.
 */
#ifndef _FZARCH_H
#define _FZARCH_H

#include <stdio.h>
#include <string.h>

#include "policy.h"

#if defined(__x86_64__)
#include <cpuid.h>

#define FZ_ARCH_POLICY_ATTRS	"erms_threshold_source", "clzero",
#define FZ_ARCH_KNOBS		"erms_threshold",
/* The loops whose wide stores a resolved fault must not turn bytewise. */
#define FZ_WIDE_VARIANTS	{ "unrolled", "rep_stosq", "nt" }

/* The first /proc/cpuinfo line starting with @key, into @line. */
static inline int fz_cpuinfo_line(const char *key, char *line, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;

	while (f && !found && fgets(line, len, f))
		found = !strncmp(line, key, strlen(key));
	if (f)
		fclose(f);
	return found;
}

/* @flag is a word of the flags line @flags. */
static inline int fz_has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);
	const char *p = flags;

	while ((p = strstr(p, flag))) {
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' ||
						     !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

static inline void fz_user_cpuid(unsigned int leaf, unsigned int sub,
				 unsigned int *r)
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

/* The CPU as arch/x86/cpu.c reads it. */
static inline void fz_guest_cpu(struct fz_cpu *cpu)
{
	static char line[8192];
	unsigned int eax, ebx, ecx, edx;
	unsigned long kb;
	const char *p;

	memset(cpu, 0, sizeof(*cpu));
	if (fz_cpuinfo_line("vendor_id", line, sizeof(line))) {
		if (strstr(line, "GenuineIntel"))
			cpu->vendor = FZ_VENDOR_INTEL;
		else if (strstr(line, "AuthenticAMD") || strstr(line, "HygonGenuine"))
			cpu->vendor = FZ_VENDOR_AMD;
	}
	if (fz_cpuinfo_line("cache size", line, sizeof(line)) &&
	    (p = strchr(line, ':')) && sscanf(p + 1, "%lu", &kb) == 1)
		cpu->fallback_kb = kb;
	if (fz_cpuinfo_line("flags", line, sizeof(line))) {
		cpu->rep_good = fz_has_flag(line, "rep_good");
		cpu->erms = fz_has_flag(line, "erms");
	}
	/*
	 * Fast short rep stosb as CPUID 7.1:EAX[11] reports it, not the
	 * "fsrs" flag, which 6.4+ also sets for AMD's FSRM.
	 */
	if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
		cpu->fsrs = !!(eax & FZ_CPUID_7_1_EAX_FSRS);
	cpu->max_leaf = __get_cpuid_max(0, NULL);
	cpu->max_ext_leaf = __get_cpuid_max(0x80000000, NULL);
	fz_policy_cpu_caches(cpu, fz_user_cpuid);
}

/*
 * Whether force_variant must take loop @name on this CPU: clzero only
 * once its load-time proof passed (t_clzero tests the proof).
 */
static inline int fz_arch_runs(const char *name)
{
	static char state[32];
	FILE *f;

	if (strcmp(name, "clzero"))
		return 1;
	f = fopen("/sys/class/misc/fastzero/policy/clzero", "r");
	if (!f)
		return 0;
	if (!fgets(state, sizeof(state), f))
		state[0] = 0;
	fclose(f);
	return !strcmp(state, "usable\n");
}

/* cpu_policy.h's store for cold destinations on this CPU. */
static inline enum fz_loop fz_arch_cold_loop(const char **rule)
{
	struct fz_cpu cpu;

	fz_guest_cpu(&cpu);
	return fz_policy_cold_loop(&cpu, fz_arch_runs("clzero"), rule);
}

#elif defined(__aarch64__)
#include <sys/auxv.h>

#ifndef HWCAP2_MOPS
#define HWCAP2_MOPS		(1UL << 43)	/* uapi asm/hwcap.h, 6.5+ */
#endif

#define FZ_ARCH_POLICY_ATTRS
#define FZ_ARCH_KNOBS
#define FZ_WIDE_VARIANTS	{ "unrolled", "nt", "dc_zva" }

/* The CPU as arch/arm64/cpu.c reads it: EL0 may read DCZID_EL0. */
static inline void fz_guest_cpu(struct fz_cpu *cpu)
{
	unsigned long dczid;

	asm("mrs %0, dczid_el0" : "=r" (dczid));
	cpu->mops = !!(getauxval(AT_HWCAP2) & HWCAP2_MOPS);
	cpu->dczid = dczid;
}

/* Whether force_variant must take loop @name on this CPU. */
static inline int fz_arch_runs(const char *name)
{
	struct fz_cpu cpu;

	fz_guest_cpu(&cpu);
	if (!strcmp(name, "mops"))
		return cpu.mops;
	if (!strcmp(name, "dc_zva"))
		return !!fz_policy_zva_block(&cpu);
	return 1;
}

/* cpu_policy.h's store for cold destinations on this CPU. */
static inline enum fz_loop fz_arch_cold_loop(const char **rule)
{
	struct fz_cpu cpu;

	fz_guest_cpu(&cpu);
	return fz_policy_cold_loop(&cpu, rule);
}

#else
#error "the suite knows x86-64 and arm64"
#endif

/* The name of loop @l, as policy/ and force_variant spell it. */
static inline const char *fz_loop_name(enum fz_loop l)
{
	static const char *const names[] = FZ_LOOP_NAMES;

	return l >= 0 && l < FZ_NR_LOOPS ? names[l] : "auto";
}

#endif /* _FZARCH_H */
