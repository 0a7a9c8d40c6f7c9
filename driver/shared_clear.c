// SPDX-License-Identifier: GPL-2.0
/*
 * shared_clear.c - shared_clear=driver: shared huge folios cleared once, with the cold store.
 *
 * A new 2 MiB shmem folio is cleared twice under Debian's default
 * init_on_alloc=1: by the page allocator (post_alloc_hook(); one
 * clear_pages() over the folio on 7.x, 512 clear_page() on 6.x), then by
 * shmem_get_folio_gfp() again, 4 KiB at a time (its "clear:" label), the
 * loop the clear_pages() series exists to replace.  In this mode the VMA
 * gets a copy of shmem's vm_ops whose ->fault first allocates the folio of
 * a whole PMD range through shmem_get_folio(SGP_FALLOC), which adds it to
 * the page cache locked and not uptodate, uncleared, as fallocate() does.
 * fastzero then clears it once, with fz_clear_cold_pages() over the whole
 * folio (CLZERO or MOVNTI: it is new to the cache), or not at all when the allocator already did
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
 * them per kernel).  Its vm_ops are in module memory, so the module must
 * stay loaded while such a VMA exists; the VMA's file does that (see
 * fz_shared_file()), not vm_ops ->open/->close, because a VMA with ->close
 * never merges with a neighbour again (can_merge_remove_vma()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/userfaultfd_k.h>
#include "arch.h"
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
 * shmem's vm_ops and file operations, as the first driver-mode mapping
 * found them: the ones fz_shared_vm_ops and fz_shared_fops stand in front
 * of.
 */
static const struct vm_operations_struct *fz_shmem_vm_ops;
static const struct file_operations *fz_shmem_fops;
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
 * shmem's vm_ops with the fault in front.  map_pages is shmem's own,
 * filemap_map_pages(), which maps only folios that are uptodate and not
 * locked.  No ->open or ->close: the VMA's file holds the module.  Not
 * carried over: 7.x's uffd_ops (userfaultfd is refused on these VMAs, as
 * on 6.12 where it keys on vma_is_shmem()).
 */
static const struct vm_operations_struct fz_shared_vm_ops = {
	.fault		= fz_shared_fault,
	.map_pages	= filemap_map_pages,
#ifdef CONFIG_NUMA
	.set_policy	= fz_shared_set_policy,
	.get_policy	= fz_shared_get_policy,
#endif
};

/* MADV_REMOVE: vfs_fallocate() on the VMA's file punches the hole. */
static long fz_shared_fallocate(struct file *file, int mode, loff_t offset,
				loff_t len)
{
	return fz_shmem_fops->fallocate(file, mode, offset, len);
}

/* msync(MS_SYNC): vfs_fsync_range() on the VMA's file. */
static int fz_shared_fsync(struct file *file, loff_t start, loff_t end,
			   int datasync)
{
	return fz_shmem_fops->fsync(file, start, end, datasync);
}

/*
 * remap_file_pages(): do_mmap() of the VMA's file over part of the VMA,
 * through shmem's hook, then the driver's vm_ops again.
 */
#if FZ_SHMEM_MMAP_PREPARE
static int fz_shared_mmap_prepare(struct vm_area_desc *desc)
{
	int ret = fz_shmem_fops->mmap_prepare(desc);

	if (!ret)
		desc->vm_ops = &fz_shared_vm_ops;
	return ret;
}
#else
static int fz_shared_mmap(struct file *file, struct vm_area_struct *vma)
{
	int ret = fz_shmem_fops->mmap(file, vma);

	if (!ret)
		vma->vm_ops = &fz_shared_vm_ops;
	return ret;
}
#endif

/*
 * The file operations of a driver-mode VMA's file.  That file is never in
 * a file table: the kernel reaches it only through vma->vm_file, for
 * MADV_REMOVE, msync(), remap_file_pages() and mremap()'s placement (a
 * move keeps fastzero's 2 MiB alignment, as shmem_get_unmapped_area()
 * keeps it for shmem's own file, whose VM_BUG_ON() wants shmem's f_op).
 * Opening /proc/PID/map_files/ gives a file with the inode's own, shmem's,
 * operations.  .owner is what holds the module (fz_shared_file()).
 */
static const struct file_operations fz_shared_fops = {
	.owner			= THIS_MODULE,
#if FZ_SHMEM_MMAP_PREPARE
	.mmap_prepare		= fz_shared_mmap_prepare,
#else
	.mmap			= fz_shared_mmap,
#endif
	.get_unmapped_area	= fz_get_unmapped_area,
	.fallocate		= fz_shared_fallocate,
	.fsync			= fz_shared_fsync,
};

/* shmem's vm_ops are what fz_shared_vm_ops expects to stand in front of. */
static bool fz_shmem_ops_expected(const struct vm_operations_struct *shmem,
				  const struct file_operations *fops)
{
	return shmem && shmem->fault && shmem->map_pages == filemap_map_pages &&
	       !shmem->open && !shmem->close && !shmem->huge_fault &&
	       !shmem->page_mkwrite &&
	       (!IS_ENABLED(CONFIG_NUMA) ||
		(shmem->set_policy && shmem->get_policy)) &&
	       fops->fallocate && fops->fsync && fz_fops_have_mmap_hook(fops);
}

static int fz_shared_ops_init(const struct vm_operations_struct *shmem,
			      const struct file_operations *fops)
{
	int ret = 0;

	mutex_lock(&fz_shared_ops_lock);
	if (!fz_shmem_vm_ops) {
		if (fz_shmem_ops_expected(shmem, fops)) {
			fz_shmem_fops = fops;
			/* pairs with the acquire in fz_shared_clear_vma() */
			smp_store_release(&fz_shmem_vm_ops, shmem);
		} else {
			ret = -EINVAL;
		}
	} else if (fz_shmem_vm_ops != shmem || fz_shmem_fops != fops) {
		ret = -EINVAL;
	}
	mutex_unlock(&fz_shared_ops_lock);
	return ret;
}

/*
 * A second file on the shmem object of @shmem_file, with fz_shared_fops,
 * as the VMA's file.  It holds one module reference, taken here and put by
 * __fput() (fops_put(), after ->release, as for any file whose f_op has an
 * owner; anon_inode_getfile() pairs a try_module_get() with
 * alloc_file_pseudo() the same way), and the kernel's own get_file() and
 * fput() of vma->vm_file on every split, merge, fork, mremap and munmap
 * keep the file, and so the module, until the last VMA is gone.  The put
 * runs in kernel text, after the last use of the vm_ops.  Everything
 * shmem reads from the VMA's file goes by its inode (file_inode(),
 * f_mapping, shmem_mapping()), and this file has shmem's: the page cache,
 * i_mmap tree, commit charge, memcg and swap accounting are the object's
 * as before, and /proc/PID/maps shows the same name.
 */
static struct file *fz_shared_file(struct file *shmem_file)
{
	struct inode *inode = file_inode(shmem_file);
	struct file *file;

	__module_get(THIS_MODULE);	/* the device's open file holds one */
	ihold(inode);
	file = alloc_file_pseudo(inode, shmem_file->f_path.mnt,
				 shmem_file->f_path.dentry->d_name.name,
				 O_RDWR, &fz_shared_fops);
	if (IS_ERR(file)) {
		iput(inode);
		module_put(THIS_MODULE);
	}
	return file;
}

/**
 * fz_shared_clear_vma() - give a shared mapping the driver's fault path
 * @vma: a VMA that shmem's ->mmap has just set up
 *
 * Only mappings that can take huge pages (fz_shared_huge_ok()) come here;
 * the others keep shmem's vm_ops, as does this one if shmem's are not the
 * ones this file expects (then shmem clears its folios, as by default).
 *
 * Return: 0, or a negative errno (no file could be allocated).
 */
int fz_shared_clear_vma(struct vm_area_struct *vma)
{
	const struct vm_operations_struct *shmem = vma->vm_ops;
	struct file *file;

	/* pairs with the release in fz_shared_ops_init() */
	if (smp_load_acquire(&fz_shmem_vm_ops) != shmem &&
	    fz_shared_ops_init(shmem, vma->vm_file->f_op)) {
		pr_warn_once("unexpected shmem vm_ops: shared_clear=driver leaves the clearing to shmem\n");
		return 0;
	}
	file = fz_shared_file(vma->vm_file);
	if (IS_ERR(file))
		return PTR_ERR(file);
	vma_set_file(vma, file);
	fput(file);
	vma->vm_ops = &fz_shared_vm_ops;
	return 0;
}

#else /* !FZ_CAN_CLEAR_SHARED: the parameter refuses "driver" */

int fz_shared_clear_vma(struct vm_area_struct *vma)
{
	return 0;
}

#endif /* FZ_CAN_CLEAR_SHARED */
