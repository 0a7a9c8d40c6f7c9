/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fzcpu.h - the CPU as the driver's arch/<arch>/cpu.c reads it, read from
 * userspace: for the benchmarks (benchlib.c) and the suite (fzarch.h),
 * which derive what the module chose with the driver's cpu_policy.h.
 */
#ifndef _FZCPU_H
#define _FZCPU_H

#include <stdio.h>
#include <string.h>

#include "policy.h"

/* The value of the first "@key : value" line of /proc/cpuinfo, into @buf ("unknown": none). */
static inline const char *fz_cpuinfo_field(const char *key, char *buf, size_t len)
{
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, key, strlen(key)) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = 0;
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
	return buf;
}

#if defined(__x86_64__)
#include <cpuid.h>

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
static inline void fz_read_cpu(struct fz_cpu *cpu)
{
	static char line[8192];
	unsigned int eax, ebx, ecx, edx;
	unsigned long kb;

	memset(cpu, 0, sizeof(*cpu));
	fz_cpuinfo_field("vendor_id", line, sizeof(line));
	if (!strcmp(line, "GenuineIntel"))
		cpu->vendor = FZ_VENDOR_INTEL;
	else if (!strcmp(line, "AuthenticAMD") || !strcmp(line, "HygonGenuine"))
		cpu->vendor = FZ_VENDOR_AMD;
	if (sscanf(fz_cpuinfo_field("cache size", line, sizeof(line)), "%lu", &kb) == 1)
		cpu->fallback_kb = kb;
	fz_cpuinfo_field("flags", line, sizeof(line));
	cpu->rep_good = fz_has_flag(line, "rep_good");
	cpu->erms = fz_has_flag(line, "erms");
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

#elif defined(__aarch64__)
#include <sys/auxv.h>

#ifndef HWCAP2_MOPS
#define HWCAP2_MOPS		(1UL << 43)	/* uapi asm/hwcap.h, 6.5+ */
#endif

/* The CPU as arch/arm64/cpu.c reads it: EL0 may read DCZID_EL0. */
static inline void fz_read_cpu(struct fz_cpu *cpu)
{
	unsigned long dczid;

	asm("mrs %0, dczid_el0" : "=r" (dczid));
	cpu->mops = !!(getauxval(AT_HWCAP2) & HWCAP2_MOPS);
	cpu->dczid = dczid;
}

#endif

#endif /* _FZCPU_H */
