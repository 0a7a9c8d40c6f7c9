// SPDX-License-Identifier: GPL-2.0
/*
 * cpu.c - arm64: the CPU as cpu_policy.h sees it, and what its rules choose.
 *
 * FEAT_MOPS comes from the kernel's cpucaps, DC ZVA's block and whether it
 * is permitted from the system-wide DCZID_EL0.  Both are executed by QEMU
 * (TCG), so the suite proves every loop on each boot; no load-time proof
 * is needed (arch/x86/clzero.c's is for an instruction no emulator here
 * runs).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/seq_file.h>
#include <asm/cpufeature.h>
#include <asm/sysreg.h>
#include "arch.h"
#include "fastzero.h"

unsigned long fz_zva_block;
struct attribute *fz_arch_policy_attrs[1];	/* none (clear.h) */

static void fz_cpu_read(struct fz_cpu *cpu)
{
	cpu->mops = fz_arm64_mops_final();
	cpu->dczid = read_sanitised_ftr_reg(SYS_DCZID_EL0);
}

static bool fz_arch_decided;

static const char *fz_loop_refused(const struct fz_cpu *cpu, enum fz_loop loop)
{
	if (loop == FZ_LOOP_MOPS && !cpu->mops)
		return FZ_ARM64_NO_MOPS;
	if (loop == FZ_LOOP_ZVA && !fz_policy_zva_block(cpu))
		return "DC ZVA is prohibited here or its block is outside 16 B..2 KiB (DCZID_EL0)";
	return NULL;
}

void fz_arch_init(struct fz_arch_choice *c)
{
	struct fz_cpu cpu;
	const char *why;

	fz_cpu_read(&cpu);
	/* as x86's clzero: a loop given at load that cannot run is dropped */
	why = fz_loop_refused(&cpu, fz_forced_loop);
	if (why) {
		pr_info("force_variant=%s refused: %s; reads use the chosen loop\n",
			fz_loop_names[fz_forced_loop], why);
		fz_forced_loop = FZ_LOOP_AUTO;
	}
	fz_arch_decided = true;
	fz_zva_block = fz_policy_zva_block(&cpu);
	if (fz_policy_variant(&cpu) != fz_clear_user_selected())
		pr_warn("cpu_policy.h expects variant %s, the alternative chose %s\n",
			fz_loop_names[fz_policy_variant(&cpu)],
			fz_loop_names[fz_clear_user_selected()]);
	c->cold_loop = fz_policy_cold_loop(&cpu, true, &c->cold_why);
	c->nt_threshold = fz_policy_nt_threshold(&cpu, true, &c->nt_why);
}

/* Given at load, a loop is decided by fz_arch_init(); later, refused here. */
const char *fz_arch_loop_refused(enum fz_loop loop)
{
	struct fz_cpu cpu;

	if (!fz_arch_decided)
		return NULL;
	fz_cpu_read(&cpu);
	return fz_loop_refused(&cpu, loop);
}

void fz_arch_reasons_show(struct seq_file *m)
{
	struct fz_cpu cpu;

	fz_cpu_read(&cpu);
	seq_printf(m, "clear_user_variant: %s\n", cpu.mops ?
		   "FEAT_MOPS: the CPU's own memset (as 7.x's clear_user())" :
		   "no FEAT_MOPS: stp pairs");
	seq_printf(m, "dc_zva: DCZID_EL0 %#lx, block %lu bytes%s\n", cpu.dczid,
		   4UL << (cpu.dczid & FZ_DCZID_BS_MASK),
		   fz_zva_block ? "" : ", not used");
}
