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

#include "fzcpu.h"	/* userspace/: fz_read_cpu() */
#include "policy.h"

#if defined(__x86_64__)

#define FZ_ARCH_POLICY_ATTRS	"erms_threshold_source", "clzero",
#define FZ_ARCH_KNOBS		"erms_threshold",
/* The loops whose wide stores a resolved fault must not turn bytewise. */
#define FZ_WIDE_VARIANTS	{ "unrolled", "rep_stosq", "nt" }

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

/* The cold store passed its proof: the clzero self-test (policy/clzero). */
static inline bool fz_arch_cold_ok(void)
{
	return fz_arch_runs("clzero");
}

/* What the tests saw of the CPU, for a diagnostic line. */
static inline void fz_arch_cpu_str(const struct fz_cpu *cpu, char *buf, size_t len)
{
	snprintf(buf, len, "vendor %d rep_good %d erms %d fsrs %d, last-level cache %lu KiB (%lu per thread) from %s",
		 cpu->vendor, cpu->rep_good, cpu->erms, cpu->fsrs, cpu->llc_size >> 10,
		 cpu->llc_per_thread >> 10, cpu->llc_from);
}

#elif defined(__aarch64__)
#define FZ_ARCH_POLICY_ATTRS
#define FZ_ARCH_KNOBS
#define FZ_WIDE_VARIANTS	{ "unrolled", "nt", "dc_zva" }

/* Whether force_variant must take loop @name on this CPU. */
static inline int fz_arch_runs(const char *name)
{
	struct fz_cpu cpu;

	fz_read_cpu(&cpu);
	if (!strcmp(name, "mops"))
		return cpu.mops;
	if (!strcmp(name, "dc_zva"))
		return !!fz_policy_zva_block(&cpu);
	return 1;
}

/* The cold store needs no proof on arm64 (cpu_policy.h). */
static inline bool fz_arch_cold_ok(void)
{
	return true;
}

static inline void fz_arch_cpu_str(const struct fz_cpu *cpu, char *buf, size_t len)
{
	snprintf(buf, len, "FEAT_MOPS %d, DCZID_EL0 %#lx", cpu->mops, cpu->dczid);
}

#else
#error "the suite knows x86-64 and arm64"
#endif

/* cpu_policy.h's store for cold destinations on this CPU. */
static inline enum fz_loop fz_arch_cold_loop(const char **rule)
{
	struct fz_cpu cpu;

	fz_read_cpu(&cpu);
	return fz_policy_cold_loop(&cpu, fz_arch_cold_ok(), rule);
}

/* The name of loop @l, as policy/ and force_variant spell it. */
static inline const char *fz_loop_name(enum fz_loop l)
{
	static const char *const names[] = FZ_LOOP_NAMES;

	return l >= 0 && l < FZ_NR_LOOPS ? names[l] : "auto";
}

#endif /* _FZARCH_H */
