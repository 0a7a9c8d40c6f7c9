// SPDX-License-Identifier: GPL-2.0
/*
 * shared_clear.c - shared_clear=driver: shared huge folios cleared once, with clear_pages().
 *
 * A new 2 MiB shmem folio is cleared twice under Debian's default
 * init_on_alloc=1: by the page allocator (post_alloc_hook(); one
 * clear_pages() over the folio on 7.x, 512 clear_page() on 6.x), then by
 * shmem_get_folio_gfp() again, 4 KiB at a time (its "clear:" label), the
 * loop the clear_pages() series exists to replace.  In this mode the VMA
 * gets a copy of shmem's vm_ops whose ->fault first allocates the folio of
 * a whole PMD range through shmem_get_folio(SGP_FALLOC), which adds it to
 * the page cache locked and not uptodate, uncleared, as fallocate() does.
 * fastzero then clears it once, with fz_clear_pages()
 * over the whole folio, or not at all when the allocator already did
 * (fz_alloc_needs_zeroing()), marks it uptodate and unlocks it; shmem's own
 * ->fault finds it in the cache and maps it with one PMD (finish_fault()).
 * Every other fault is shmem's alone, and so is everything else: the
 * folio is allocated, commit-charged and accounted by shmem, charged to
 * the faulting mm's memory cgroup (as shmem_fault() charges vma->vm_mm),
 * swapped, migrated and truncated as any shmem folio.
 *
 * No byte escapes the clear: a folio is in the page cache uncleared only
 * while fastzero holds its lock and it is not uptodate, and every path
 * that maps or reads a shmem folio either locks it and tests uptodate
 * (shmem_get_folio_gfp()) or skips a folio that is locked or not uptodate
 * (filemap_map_pages()).
 *
 * What it costs: the VMA no longer has shmem's vm_ops, so vma_is_shmem()
 * and vma_is_anon_shmem() are false for it (the README lists what keys on
 * them per kernel), and its vm_ops are in module memory, so each such VMA
 * holds a module reference (->open/->close) and the module stays loaded
 * while one exists.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/userfaultfd_k.h>
#include "clear.h"
#include "compat.h"
#include "fastzero.h"
#include "stats.h"

const char * const fz_shared_clear_names[FZ_NR_SHARED_CLEAR] = {
	[FZ_SHARED_CLEAR_SHMEM]		= "shmem",
	[FZ_SHARED_CLEAR_DRIVER]	= "driver",
};

int fz_shared_clear = FZ_SHARED_CLEAR_SHMEM;

#if FZ_CAN_CLEAR_SHARED

/*
 * shmem's vm_ops, as the first driver-mode mapping found them: the ones
 * fz_shared_vm_ops stands in front of.
 */
static const struct vm_operations_struct *fz_shmem_vm_ops;
static DEFINE_MUTEX(fz_shared_ops_lock);

/*
 * The first page offset of the PMD range around the fault, if one PMD can
 * map it: the range lies inside the VMA at a PMD-aligned address and file
 * offset (as thp_vma_suitable_order() asks), inside the object's size, and
 * THP is not refused for the VMA.
 */
static bool fz_fault_pmd_range(const struct vm_fault *vmf, pgoff_t *start)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long haddr = vmf->address & HPAGE_PMD_MASK;
	pgoff_t first = vmf->pgoff - ((vmf->address - haddr) >> PAGE_SHIFT);
	loff_t end = (loff_t)(first + HPAGE_PMD_NR) << PAGE_SHIFT;

	if (haddr < vma->vm_start || haddr + HPAGE_PMD_SIZE > vma->vm_end ||
	    !IS_ALIGNED(first, HPAGE_PMD_NR))
		return false;
	if (end > i_size_read(file_inode(vma->vm_file)))
		return false;
	if (fz_vma_thp_disabled(vma))
		return false;
	*start = first;
	return true;
}

/*
 * Allocate the folio for the faulting offset through shmem, charged to the
 * VMA's mm, and clear it once.  shmem_get_folio() picks the order as for a
 * write up to @start's PMD end (huge=within_size) and rounds the index
 * down to it; under memory pressure it falls back to one 4 KiB page at
 * the faulting offset, which is cleared the same way.  Any failure is left
 * to shmem's own fault, which meets the same condition and answers it
 * (-ENOSPC, -ENOMEM).
 */
static void fz_shared_fill(struct vm_fault *vmf, pgoff_t start)
{
	struct vm_area_struct *vma = vmf->vma;
	struct inode *inode = file_inode(vma->vm_file);
	loff_t write_end = (loff_t)(start + HPAGE_PMD_NR) << PAGE_SHIFT;
	struct mem_cgroup *memcg, *old;
	struct folio *folio;
	int err;

	/*
	 * SGP_FALLOC, not SGP_WRITE: both leave a new folio uncleared, but
	 * SGP_WRITE also marks it referenced (and an existing one accessed)
	 * for the write(2) about to fill it, and reclaim would then activate
	 * every such folio on its first scan instead of ageing it as the
	 * folios of shmem's own fault (SGP_CACHE).  SGP_FALLOC clears an
	 * existing !uptodate (fallocated) folio itself.
	 */
	memcg = get_mem_cgroup_from_mm(vma->vm_mm);
	old = set_active_memcg(memcg);
	err = shmem_get_folio(inode, vmf->pgoff, write_end, &folio, SGP_FALLOC);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	if (err)
		return;
	/* Not uptodate under the folio lock: new, as the allocator gave it. */
	if (!folio_test_uptodate(folio)) {
		if (fz_alloc_needs_zeroing()) {
			/* fresh from the allocator: cold (policy.h) */
			fz_clear_cold_pages(folio_address(folio),
					    folio_nr_pages(folio),
					    READ_ONCE(fz_cold_loop));
			fz_stat_add(FZ_STAT_SHARED_CLEARED, folio_nr_pages(folio));
		} else {
			fz_stat_add(FZ_STAT_SHARED_PRECLEARED,
				    folio_nr_pages(folio));
		}
		flush_dcache_folio(folio);
		folio_mark_uptodate(folio);
	}
	folio_unlock(folio);
	folio_put(folio);
}

/*
 * A fault with nothing in the cache at its offset (no folio, no swap
 * entry) in a range one PMD could map takes fz_shared_fill(); shmem makes
 * that a huge folio when the whole range is empty (shmem_suitable_orders()
 * looks), else a 4 KiB one.  Not when shmem must see the fault itself:
 * userfaultfd handles missing pages, and a hole punch in progress
 * (i_private, see shmem_falloc_wait()) must not be refilled behind its
 * back.
 */
static vm_fault_t fz_shared_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct inode *inode = file_inode(vma->vm_file);
	pgoff_t start;

	if (!userfaultfd_armed(vma) && !READ_ONCE(inode->i_private) &&
	    !xa_load(&inode->i_mapping->i_pages, vmf->pgoff) &&
	    fz_fault_pmd_range(vmf, &start))
		fz_shared_fill(vmf, start);
	return fz_shmem_vm_ops->fault(vmf);
}

/* Each VMA with these vm_ops holds the module: fork and splits copy it. */
static void fz_shared_open(struct vm_area_struct *vma)
{
	__module_get(THIS_MODULE);
}

/*
 * The put is the last thing ->close() does: only its return to
 * remove_vma() is left in module text.  delete_module() frees that text
 * after mod->exit() and an RCU grace period (free_module()), so the one
 * window left is a task preempted on that return while root unloads the
 * module, the window of any module that drops a reference on itself; VMAs
 * have no owner field that would let the core drop it (as fops_put() does
 * for files).
 */
static void fz_shared_close(struct vm_area_struct *vma)
{
	module_put(THIS_MODULE);
}

#ifdef CONFIG_NUMA
/* mbind() and the fault's mempolicy: shmem's shared policy of the object. */
static int fz_shared_set_policy(struct vm_area_struct *vma,
				struct mempolicy *mpol)
{
	return fz_shmem_vm_ops->set_policy(vma, mpol);
}

static struct mempolicy *fz_shared_get_policy(struct vm_area_struct *vma,
					      unsigned long addr, pgoff_t *ilx)
{
	return fz_shmem_vm_ops->get_policy(vma, addr, ilx);
}
#endif

/*
 * shmem's vm_ops with the fault in front and a module reference per VMA.
 * map_pages is shmem's own, filemap_map_pages(), which maps only folios
 * that are uptodate and not locked.  Not carried over: 7.x's uffd_ops
 * (userfaultfd is refused on these VMAs, as on 6.12 where it keys on
 * vma_is_shmem()).
 */
static const struct vm_operations_struct fz_shared_vm_ops = {
	.open		= fz_shared_open,
	.close		= fz_shared_close,
	.fault		= fz_shared_fault,
	.map_pages	= filemap_map_pages,
#ifdef CONFIG_NUMA
	.set_policy	= fz_shared_set_policy,
	.get_policy	= fz_shared_get_policy,
#endif
};

/* shmem's vm_ops are what fz_shared_vm_ops expects to stand in front of. */
static bool fz_shmem_ops_expected(const struct vm_operations_struct *shmem)
{
	return shmem && shmem->fault && shmem->map_pages == filemap_map_pages &&
	       !shmem->open && !shmem->close && !shmem->huge_fault &&
	       !shmem->page_mkwrite &&
	       (!IS_ENABLED(CONFIG_NUMA) ||
		(shmem->set_policy && shmem->get_policy));
}

static int fz_shared_ops_init(const struct vm_operations_struct *shmem)
{
	int ret = 0;

	mutex_lock(&fz_shared_ops_lock);
	if (!fz_shmem_vm_ops) {
		if (fz_shmem_ops_expected(shmem))
			/* pairs with the acquire in fz_shared_clear_vma() */
			smp_store_release(&fz_shmem_vm_ops, shmem);
		else
			ret = -EINVAL;
	} else if (fz_shmem_vm_ops != shmem) {
		ret = -EINVAL;
	}
	mutex_unlock(&fz_shared_ops_lock);
	return ret;
}

/**
 * fz_shared_clear_vma() - give a shared mapping the driver's fault path
 * @vma: a VMA that shmem's ->mmap has just set up
 *
 * Only mappings that can take huge pages (fz_shared_huge_ok()) come here;
 * the others keep shmem's vm_ops, as does this one if shmem's are not the
 * ones this file expects (then shmem clears its folios, as by default).
 */
void fz_shared_clear_vma(struct vm_area_struct *vma)
{
	const struct vm_operations_struct *shmem = vma->vm_ops;

	/* pairs with the release in fz_shared_ops_init() */
	if (smp_load_acquire(&fz_shmem_vm_ops) != shmem &&
	    fz_shared_ops_init(shmem)) {
		pr_warn_once("unexpected shmem vm_ops: shared_clear=driver leaves the clearing to shmem\n");
		return;
	}
	__module_get(THIS_MODULE);
	vma->vm_ops = &fz_shared_vm_ops;
}

#else /* !FZ_CAN_CLEAR_SHARED: the parameter refuses "driver" */

void fz_shared_clear_vma(struct vm_area_struct *vma)
{
}

#endif /* FZ_CAN_CLEAR_SHARED */
