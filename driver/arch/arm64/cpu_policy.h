/* SPDX-License-Identifier: GPL-2.0 */
/* cpu_policy.h - arm64: the loop, thresholds and cold store for a CPU, shared with userspace. */
#ifndef _FASTZERO_CPU_POLICY_H
#define _FASTZERO_CPU_POLICY_H

/*
 * Static inline functions of plain arguments, as policy.h's: arch/arm64/cpu.c
 * calls them with what the kernel reads of the CPU (its cpucaps and
 * DCZID_EL0), userspace with HWCAP2_MOPS and DCZID_EL0, which EL0 may read.
 * No arm64 hardware has measured these rules: each is the kernel's or
 * glibc's choice, cited, and the thresholds are parameters.
 */
#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#endif
#include <linux/sizes.h>
#include "clear_loops.h"

/* DCZID_EL0: BS, log2 of the block in words, and DZP, DC ZVA prohibited. */
#define FZ_DCZID_BS_MASK	0xfUL
#define FZ_DCZID_DZP		0x10UL

/**
 * struct fz_cpu - what the choices are derived from
 * @mops: FEAT_MOPS (the kernel's ARM64_HAS_MOPS, userspace's HWCAP2_MOPS)
 * @dczid: DCZID_EL0
 */
struct fz_cpu {
	bool mops;
	unsigned long dczid;
};

/**
 * fz_policy_zva_block() - the DC ZVA block the zva loop may use
 * @cpu: the CPU's DCZID_EL0
 *
 * Return: the block in bytes, or 0 where DC ZVA is prohibited or its
 * block is outside FZ_ZVA_BLOCK_MIN..FZ_ZVA_BLOCK_MAX.
 */
static inline unsigned long fz_policy_zva_block(const struct fz_cpu *cpu)
{
	unsigned long block = 4UL << (cpu->dczid & FZ_DCZID_BS_MASK);

	if (cpu->dczid & FZ_DCZID_DZP)
		return 0;
	if (block < FZ_ZVA_BLOCK_MIN || block > FZ_ZVA_BLOCK_MAX)
		return 0;
	return block;
}

/**
 * fz_policy_variant() - the loop fz_clear_user() runs
 * @cpu: the CPU's features
 *
 * As clear.h's alternative: MOPS where the CPU has it (the kernel's own
 * choice in 7.x's clear_user()), else the stp loop.
 *
 * Return: FZ_LOOP_MOPS or FZ_LOOP_UNROLLED.
 */
static inline enum fz_loop fz_policy_variant(const struct fz_cpu *cpu)
{
	return cpu->mops ? FZ_LOOP_MOPS : FZ_LOOP_UNROLLED;
}

/**
 * fz_policy_nt_threshold() - read size from which the cold or nt store is used
 * @cpu: the CPU (unused: a module cannot read the cache sizes on arm64)
 * @cold_ok: the cold store may run (unused here)
 * @why: if not NULL, set to the reason (debugfs fastzero/reasons)
 *
 * get_cpu_cacheinfo() is not exported, and CCSIDR_EL1 does not give a
 * cache's size on every implementation (FEAT_CCIDX, Arm ARM D23.2), so
 * x86's rule for a CPU without cache information: glibc's 64 MiB.
 *
 * Return: the threshold in bytes.
 */
static inline unsigned long fz_policy_nt_threshold(const struct fz_cpu *cpu,
						   bool cold_ok, const char **why)
{
	(void)cpu;
	(void)cold_ok;
	if (why)
		*why = "derived: arm64, no cache size a module can read: glibc's 64 MiB";
	return SZ_64M;
}

/**
 * fz_policy_cold_loop() - the store for destinations the cache does not hold
 * @cpu: the CPU's DCZID_EL0
 * @cold_ok: DC ZVA may run: always, no proof is needed on arm64 (QEMU runs
 *	it, so the suite proves it); the argument x86's CLZERO proof takes
 * @why: if not NULL, set to the reason (debugfs fastzero/reasons)
 *
 * DC ZVA allocates the block's line without fetching it: glibc's memset
 * zeroes with it from 256 bytes where the block is 64 (sysdeps/aarch64/
 * memset.S), the kernel's clear_page() always.  Where it is prohibited,
 * none.
 *
 * Return: FZ_LOOP_ZVA or FZ_LOOP_AUTO.
 */
static inline enum fz_loop fz_policy_cold_loop(const struct fz_cpu *cpu,
					       bool cold_ok, const char **why)
{
	enum fz_loop loop = FZ_LOOP_ZVA;
	const char *reason = "derived: DC ZVA, which writes a block without reading it";

	if (!cold_ok || !fz_policy_zva_block(cpu)) {
		loop = FZ_LOOP_AUTO;
		reason = cpu->dczid & FZ_DCZID_DZP ?
			 "derived: DC ZVA prohibited (DCZID_EL0.DZP): the chosen loop" :
			 "derived: DC ZVA block outside 16 B..2 KiB: the chosen loop";
	}
	if (why)
		*why = reason;
	return loop;
}

#endif /* _FASTZERO_CPU_POLICY_H */
