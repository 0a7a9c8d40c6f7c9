// SPDX-License-Identifier: GPL-2.0
/*
 * mmap.c - mmap() of /dev/fastzero: shared objects of cleared extents; private is anonymous.
 *
 * MAP_SHARED: each mmap() call creates one fastzero object, shared by every
 * VMA derived from it (fork, mremap, splits) and freed with the last one.
 * Its memory is a set of naturally aligned extents (folios of up to PMD
 * size, smaller under fragmentation), each cleared with one clear_pages()
 * call and mapped whole on its first fault with vm_insert_pages(), so a
 * 2 MiB extent costs one fault instead of 512.  Pages are charged to the
 * caller's memory cgroup (__GFP_ACCOUNT).  Like shmem, an object has the
 * size of the first mapping: access beyond it (after mremap growth) gets
 * SIGBUS.  Unlike /dev/zero's shmem object, a mapping at a file offset is
 * an object of its own size, not a window past its end.
 *
 * MAP_PRIVATE: the core anonymous-memory path, exactly as /dev/zero does.
 * Private zero memory must be anonymous to behave identically: COW across
 * fork, MADV_DONTNEED/MADV_FREE, KSM, userfaultfd, swap and smaps all key on
 * vma_is_anonymous().  Its faults clear through the kernel (clear_pages()
 * for large folios on 7.0+); fastzero adds THP-aligned placement.
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "clear.h"
#include "compat.h"
#include "fastzero.h"
#include "stats.h"

/* Fallback order when a PMD-sized folio is not available. */
#define FZ_MID_ORDER		PAGE_ALLOC_COSTLY_ORDER
/* Pages cleared per clear_pages() call before a cond_resched(). */
#define FZ_CLEAR_BATCH		(SZ_32M >> PAGE_SHIFT)
/* Pages handed to one vm_insert_pages() call. */
#define FZ_INSERT_BATCH		32

/**
 * struct fz_object - the memory behind one MAP_SHARED mmap() of /dev/fastzero
 * @refs: one reference per VMA using the object
 * @base: vm_pgoff of the mapping that created the object: object index 0
 * @nr_pages: size of the object in pages
 * @extents: object page index -> folio, keyed by each folio's first index
 * @publish: serializes the check that a block is free with its insertion
 *	(lookups are lockless; extents are only removed with the object)
 */
struct fz_object {
	refcount_t refs;
	pgoff_t base;
	pgoff_t nr_pages;
	struct xarray extents;
	struct mutex publish;	/* see @publish above */
};

static struct fz_object *fz_object_create(struct vm_area_struct *vma)
{
	struct fz_object *obj;

	obj = kzalloc(sizeof(*obj), GFP_KERNEL_ACCOUNT);
	if (!obj)
		return NULL;
	refcount_set(&obj->refs, 1);
	obj->base = vma->vm_pgoff;
	obj->nr_pages = vma_pages(vma);
	xa_init(&obj->extents);
	mutex_init(&obj->publish);
	fz_stat_inc(FZ_STAT_SHARED_OBJECTS);
	return obj;
}

static void fz_object_put(struct fz_object *obj)
{
	struct folio *folio;
	unsigned long index;

	if (!refcount_dec_and_test(&obj->refs))
		return;
	xa_for_each(&obj->extents, index, folio) {
		fz_stat_add(FZ_STAT_SHARED_PAGES, -folio_nr_pages(folio));
		folio_put(folio);
	}
	xa_destroy(&obj->extents);
	mutex_destroy(&obj->publish);
	kfree(obj);
	fz_stat_add(FZ_STAT_SHARED_OBJECTS, -1);
}

/* The extent holding object page @index, if it has been allocated. */
static struct folio *fz_object_lookup(struct fz_object *obj, pgoff_t index)
{
	unsigned int order;

	for (order = 0; order <= FZ_MAX_ORDER; order++) {
		pgoff_t first = round_down(index, 1UL << order);
		struct folio *folio = xa_load(&obj->extents, first);

		if (folio && first + folio_nr_pages(folio) > index)
			return folio;
	}
	return NULL;
}

unsigned int fz_max_extent_order = FZ_MAX_ORDER;

/* Largest allowed order whose aligned block around @index fits the object. */
static unsigned int fz_fit_order(struct fz_object *obj, pgoff_t index)
{
	unsigned int order = READ_ONCE(fz_max_extent_order);

	while (order &&
	       round_down(index, 1UL << order) + (1UL << order) > obj->nr_pages)
		order--;
	return order;
}

/* Is no extent allocated in [@first, @first + @nr)?  Caller holds publish. */
static bool fz_range_free(struct fz_object *obj, pgoff_t first,
			  unsigned long nr)
{
	unsigned long index = first;

	return !xa_find(&obj->extents, &index, first + nr - 1, XA_PRESENT);
}

static struct folio *fz_folio_alloc(unsigned int order)
{
	gfp_t gfp = GFP_USER | __GFP_ACCOUNT;

	if (order)
		gfp |= __GFP_NORETRY | __GFP_NOWARN;
	return folio_alloc(gfp, order);
}

/*
 * Zero a new extent: one clear_pages() call per contiguous run, in batches
 * that keep each call short.  With init_on_alloc (Debian's default) the page
 * allocator has zeroed the folio already; clearing it again would only
 * double the cost, as shmem does.
 */
static void fz_clear_extent(struct folio *folio)
{
	unsigned long nr = folio_nr_pages(folio);
	unsigned long done;

	if (want_init_on_alloc(GFP_USER))
		return;
	for (done = 0; done < nr; done += FZ_CLEAR_BATCH) {
		fz_clear_pages(folio_address(folio) + done * PAGE_SIZE,
			       min(nr - done, FZ_CLEAR_BATCH));
		if (done + FZ_CLEAR_BATCH < nr)
			cond_resched();
	}
}

/*
 * Allocate, clear and publish the extent for object page @index: the
 * largest free aligned block that fits, falling back to smaller orders
 * when memory is fragmented.  Clearing happens outside any lock; concurrent
 * faults race to publish, and the loser frees its folio and uses the
 * winner's.
 */
static struct folio *fz_object_populate(struct fz_object *obj, pgoff_t index)
{
	unsigned int order = fz_fit_order(obj, index);

	for (;;) {
		pgoff_t first = round_down(index, 1UL << order);
		struct folio *folio, *found;
		bool published = false;

		folio = fz_folio_alloc(order);
		if (!folio) {
			if (!order)
				return ERR_PTR(-ENOMEM);
			order = min(order - 1, FZ_MID_ORDER);
			continue;
		}
		fz_clear_extent(folio);

		mutex_lock(&obj->publish);
		found = fz_object_lookup(obj, index);
		if (!found && fz_range_free(obj, first, 1UL << order)) {
			int err = xa_err(xa_store(&obj->extents, first, folio,
						  GFP_KERNEL_ACCOUNT));

			if (err)
				found = ERR_PTR(err);
			else
				published = true;
		}
		mutex_unlock(&obj->publish);

		if (published) {
			fz_stat_add(FZ_STAT_SHARED_PAGES, 1L << order);
			fz_stat_inc(FZ_STAT_SHARED_EXTENTS);
			if (order == FZ_MAX_ORDER)
				fz_stat_inc(FZ_STAT_SHARED_HUGE);
			return folio;
		}
		folio_put(folio);
		if (found)
			return found;
		/* A smaller extent was published inside our block. */
		order = 0;
	}
}

/* Map @nr pages starting at @page at @addr; pages already mapped are skipped. */
static int fz_insert_pages(struct vm_area_struct *vma, unsigned long addr,
			   struct page *page, unsigned long nr)
{
	struct page *pages[FZ_INSERT_BATCH];

	while (nr) {
		unsigned long batch = min_t(unsigned long, nr, FZ_INSERT_BATCH);
		unsigned long left = batch, done, i;
		int ret;

		for (i = 0; i < batch; i++)
			pages[i] = page + i;
		ret = vm_insert_pages(vma, addr, pages, &left);
		done = batch - left;
		if (ret == -EBUSY)
			done++;
		else if (ret)
			return ret;
		addr += done << PAGE_SHIFT;
		page += done;
		nr -= done;
	}
	return 0;
}

/* Map the part of extent @folio, at object index @first, that @vma covers. */
static int fz_map_extent(struct vm_area_struct *vma, struct fz_object *obj,
			 struct folio *folio, pgoff_t first)
{
	pgoff_t start = obj->base + first;
	pgoff_t end = start + folio_nr_pages(folio);
	pgoff_t vstart = max(start, vma->vm_pgoff);
	pgoff_t vend = min(end, vma->vm_pgoff + vma_pages(vma));
	unsigned long addr;

	addr = vma->vm_start + ((vstart - vma->vm_pgoff) << PAGE_SHIFT);
	return fz_insert_pages(vma, addr, folio_page(folio, vstart - start),
			       vend - vstart);
}

static vm_fault_t fz_shared_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct fz_object *obj = vma->vm_private_data;
	pgoff_t index = vmf->pgoff - obj->base;
	struct folio *folio;
	int ret;

	if (vmf->pgoff < obj->base || index >= obj->nr_pages)
		return VM_FAULT_SIGBUS;

	fz_stat_inc(FZ_STAT_SHARED_FAULTS);
	folio = fz_object_lookup(obj, index);
	if (!folio)
		folio = fz_object_populate(obj, index);
	if (IS_ERR(folio))
		return VM_FAULT_OOM;

	/* Extents are naturally aligned: the first index follows from the size. */
	ret = fz_map_extent(vma, obj, folio,
			    round_down(index, folio_nr_pages(folio)));
	if (ret == -ENOMEM)
		return VM_FAULT_OOM;
	if (ret)
		return VM_FAULT_SIGBUS;
	return VM_FAULT_NOPAGE;
}

static void fz_shared_open(struct vm_area_struct *vma)
{
	struct fz_object *obj = vma->vm_private_data;

	refcount_inc(&obj->refs);
}

static void fz_shared_close(struct vm_area_struct *vma)
{
	fz_object_put(vma->vm_private_data);
}

static const struct vm_operations_struct fz_shared_vm_ops = {
	.open	= fz_shared_open,
	.close	= fz_shared_close,
	.fault	= fz_shared_fault,
};

/*
 * VM_MIXEDMAP lets the fault handler insert whole extents with
 * vm_insert_pages(); the pages stay normal pages (refcounted, rmapped), so
 * GUP, vmsplice, process_vm_readv and O_DIRECT work on them.
 */
static int fz_mmap_shared(struct vm_area_struct *vma)
{
	struct fz_object *obj = fz_object_create(vma);

	if (!obj)
		return -ENOMEM;
	vma->vm_private_data = obj;
	vma->vm_ops = &fz_shared_vm_ops;
	fz_vm_flags_set(vma, VM_MIXEDMAP);
	return 0;
}

int fz_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_SHARED)
		return fz_mmap_shared(vma);

	fz_stat_inc(FZ_STAT_PRIVATE_MAPS);
	vma_set_anonymous(vma);
	return 0;
}

/*
 * Place mappings of a PMD or more on a PMD boundary, so private memory can
 * be backed by transparent huge pages from its first fault (as /dev/zero
 * does from 6.18 on), and shared extents line up with page tables.
 */
unsigned long fz_get_unmapped_area(struct file *file, unsigned long addr,
				   unsigned long len, unsigned long pgoff,
				   unsigned long flags)
{
	unsigned long padded = len + PMD_SIZE;
	unsigned long ret;

	if (addr || (flags & MAP_FIXED) || len < PMD_SIZE || padded < len)
		return fz_mm_get_unmapped_area(addr, len, pgoff, flags);

	ret = fz_mm_get_unmapped_area(0, padded, 0, flags);
	if (IS_ERR_VALUE(ret))
		return fz_mm_get_unmapped_area(addr, len, pgoff, flags);
	return ALIGN(ret, PMD_SIZE);
}
