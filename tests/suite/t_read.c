// SPDX-License-Identifier: GPL-2.0
/*
 * t_read - read() and pread() on the device, differential against the
 * reference: every size 0..4097, big sizes, destination alignments,
 * destinations running into a PROT_NONE page, and invalid destinations.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fztest.h"

static int dev, ref;

struct size_range {
	fz_read_fn fn;
	size_t first, last;
};

static int test_size_range(const void *arg, char *why)
{
	const struct size_range *r = arg;
	char sub[FZ_WHYLEN];
	struct fz_agg agg;
	size_t len;

	fz_agg_init(&agg);
	for (len = r->first; len <= r->last; len++)
		fz_agg_add(&agg, fz_check_size(dev, ref, r->fn, len, 0, sub),
			   "size %zu", sub, len);
	return fz_agg_result(&agg, why);
}

static int test_big_size(const void *arg, char *why)
{
	size_t len = *(const size_t *)arg;

	return fz_check_size(dev, ref, fz_do_read, len, 0, why);
}

static int test_alignments(const void *arg, char *why)
{
	size_t len = *(const size_t *)arg, align;
	char sub[FZ_WHYLEN];
	struct fz_agg agg;

	fz_agg_init(&agg);
	for (align = 0; align < 64; align++)
		fz_agg_add(&agg, fz_check_size(dev, ref, fz_do_read, len,
					       align, sub),
			   "align %zu", sub, align);
	return fz_agg_result(&agg, why);
}

/*
 * Reads of @len = k + @extra bytes into a buffer that starts k bytes before
 * a PROT_NONE page, for k = @first..@last in steps of @step.
 */
struct hole_range {
	size_t first, last, step, extra;
};

static int test_hole_range(const void *arg, char *why)
{
	const struct hole_range *r = arg;
	char sub[FZ_WHYLEN];
	struct fz_hole h;
	struct fz_agg agg;
	size_t k;

	if (fz_hole_alloc(&h, r->last + FZ_GUARD))
		return fz_fail(why, "mmap: %s", strerror(errno));
	fz_agg_init(&agg);
	for (k = r->first; k <= r->last; k += r->step)
		fz_agg_add(&agg, fz_check_hole(dev, ref, fz_do_read, &h, k,
					       k + r->extra, sub),
			   "offset %zu", sub, k);
	fz_hole_free(&h);
	return fz_agg_result(&agg, why);
}

/* Offsets 4096 * j + d: around page and cache-line boundaries, up to 1 MiB. */
static int test_hole_sampled(const void *arg, char *why)
{
	static const size_t deltas[] = { 0, 1, 7, 8, 63, 64, 65, 2048, 4095 };
	static const size_t pages[] = { 1, 2, 3, 7, 16, 17, 255, 256 };
	char sub[FZ_WHYLEN];
	struct fz_hole h;
	struct fz_agg agg;
	size_t i, j, k;

	(void)arg;
	if (fz_hole_alloc(&h, FZ_MiB + 4096 + FZ_GUARD))
		return fz_fail(why, "mmap: %s", strerror(errno));
	fz_agg_init(&agg);
	for (i = 0; i < FZ_ARRAY_SIZE(pages); i++) {
		for (j = 0; j < FZ_ARRAY_SIZE(deltas); j++) {
			k = pages[i] * 4096 + deltas[j];
			fz_agg_add(&agg, fz_check_hole(dev, ref, fz_do_read,
						       &h, k, k + 4096, sub),
				   "offset %zu", sub, k);
		}
	}
	fz_hole_free(&h);
	return fz_agg_result(&agg, why);
}

/* Reads whose destination is invalid in part or as a whole. */
struct bad_dest {
	const char *name;
	int (*setup)(struct bad_dest *b);
	size_t len;
	ssize_t exact;		/* the exact count, or 0: as the reference */
	/* filled in by setup */
	unsigned char *buf, *lo, *hi, *map;
	size_t maplen;
};

static int setup_readonly(struct bad_dest *b)
{
	b->maplen = 2 * fz_page;
	b->map = fz_mmap(b->maplen, PROT_READ);
	b->buf = b->map ? b->map + 100 : NULL;
	return b->map ? 0 : -1;
}

static int setup_kernel(struct bad_dest *b)
{
	b->buf = FZ_KERNEL_ADDR;
	return 0;
}

static int setup_null(struct bad_dest *b)
{
	b->buf = NULL;
	return 0;
}

/* Straddling the end of the lower half: only the last user page is mapped. */
static int setup_top(struct bad_dest *b)
{
	const uintptr_t top = 0x7ffffffff000UL;
	void *p;

	b->maplen = fz_page;
	p = mmap((void *)(top - fz_page), fz_page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if (p != (void *)(top - fz_page)) {
		munmap(p, fz_page);
		errno = EEXIST;
		return -1;
	}
	b->map = p;
	b->buf = b->map + fz_page - 100;
	b->lo = b->map;
	b->hi = b->map + fz_page;
	return 0;
}

/*
 * A huge count into a small buffer in front of a PROT_NONE page.  The pair
 * goes low (1 TiB) where it can: mmap()'s own choice near the top of a
 * 48-bit arm64 address space leaves less than 2 GiB above it, and a range
 * past the top is refused whole (access_ok() in the VFS's import of the
 * buffer) before any driver runs.
 */
#define HOLE_HINT	((void *)(1UL << 40))

static int setup_hole(struct bad_dest *b)
{
	b->maplen = 2 * fz_page;
	b->map = mmap(HOLE_HINT, b->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b->map == MAP_FAILED)
		b->map = fz_mmap(b->maplen, PROT_READ | PROT_WRITE);
	if (!b->map || mprotect(b->map + fz_page, fz_page, PROT_NONE))
		return -1;
	b->buf = b->map + fz_page - 100;
	b->lo = b->buf - FZ_GUARD;
	b->hi = b->map + fz_page;
	return 0;
}

static int test_bad_dest(const void *arg, char *why)
{
	struct bad_dest b = *(const struct bad_dest *)arg;
	int ret;

	if (b.setup(&b))
		return fz_fail(why, "cannot set up destination: %s",
			       strerror(errno));
	ret = fz_diff_read(dev, ref, fz_do_read, b.buf, b.len, b.lo, b.hi,
			   b.exact ? b.exact : FZ_EXPECT_ANY, why);
	fz_munmap(b.map, b.maplen);
	return ret;
}

static const struct bad_dest bad_dests[] = {
	{ .name = "read_readonly_buffer", .setup = setup_readonly, .len = 1000 },
	{ .name = "read_readonly_buffer_zero_len", .setup = setup_readonly, .len = 0 },
	{ .name = "read_kernel_address", .setup = setup_kernel, .len = 4096 },
	{ .name = "read_kernel_address_1_byte", .setup = setup_kernel, .len = 1 },
	{ .name = "read_null", .setup = setup_null, .len = 4096 },
	{ .name = "read_null_zero_len", .setup = setup_null, .len = 0 },
	{ .name = "read_straddle_top_of_user", .setup = setup_top, .len = 4096 },
	{ .name = "read_len_2GiB_into_100_bytes", .setup = setup_hole,
	  .len = 2 * FZ_GiB, .exact = 100 },
	{ .name = "read_len_SIZE_MAX_into_100_bytes", .setup = setup_hole,
	  .len = SIZE_MAX },
};

int main(int argc, char **argv)
{
	static const size_t big[] = { FZ_MiB + 1, 64 * FZ_MiB, FZ_GiB };
	static const size_t align_sizes[] = {
		1, 7, 8, 9, 63, 64, 65, 127, 128, 255, 4095, 4096, 4097,
		65536 + 3,
	};
	static const struct hole_range holes[] = {
		{ 0, 4096, 1, 1 },
		{ 0, 4096, 1, 65536 },
		{ 0, 4096, 3, 4096 },
	};
	struct size_range sizes = { fz_do_read, 0, 4097 };
	struct size_range psizes = { fz_do_pread, 0, 4097 };
	size_t i;

	fz_setup(argc, argv, &dev, &ref);

	fz_run(test_size_range, &sizes, "read_sizes_0_4097");
	fz_run(test_size_range, &psizes, "pread_sizes_0_4097");
	for (i = 0; i < FZ_ARRAY_SIZE(big); i++) {
		if (fz_quick && big[i] > 64 * FZ_MiB)
			continue;
		fz_run(test_big_size, &big[i], "read_size_%zu", big[i]);
	}
	for (i = 0; i < FZ_ARRAY_SIZE(align_sizes); i++)
		fz_run(test_alignments, &align_sizes[i],
		       "read_align_0_63_size_%zu", align_sizes[i]);
	for (i = 0; i < FZ_ARRAY_SIZE(holes); i++)
		fz_run(test_hole_range, &holes[i],
		       "read_prot_none_offsets_%zu_%zu_step_%zu_len_k+%zu",
		       holes[i].first, holes[i].last, holes[i].step,
		       holes[i].extra);
	fz_run(test_hole_sampled, NULL, "read_prot_none_offsets_sampled_to_1MiB");
	for (i = 0; i < FZ_ARRAY_SIZE(bad_dests); i++)
		fz_run(test_bad_dest, &bad_dests[i], "%s", bad_dests[i].name);

	return fz_exit();
}
