// SPDX-License-Identifier: GPL-2.0
/*
 * policy_extents - the driver's read extents (driver/read_loop.h, policy.h) against simulated memory.
 *
 * Runs the driver's own extent loop, fz_read_extents(), with an
 * environment of simulated memory in place of read.c's: each piece takes
 * its bytes over the rate of the memory under it on a simulated clock.  A
 * probe can be made to run at a fixed rate (the cache holds the lines it
 * clears and says nothing about the memory behind them), and the memory
 * can drop to a slower rate at an offset, either where one mapping ends
 * and the next begins (the environment's in_vma() cuts there, as read.c's
 * VMA lookup does) or inside one mapping.  And readv()'s iovecs: the
 * extents must be the same however the bytes are cut into segments, empty
 * ones included.  Prints one line per case, "ok NAME DETAIL" or "not ok
 * NAME DETAIL": tests/host/t_policy_extents.sh makes TAP of them.
 * --trace BYTES GB/s prints the extents of one read of uniform memory
 * instead.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read_loop.h"

#define GB		1e9
#define LIMIT_NS	(2.0 * FZ_EXTENT_BUDGET_NS)

struct mem {
	double probe_gbs;	/* a probe's rate; 0: the memory's */
	double gbs, slow_gbs;	/* the memory's rate before and after @drop */
	unsigned long drop;	/* where it drops; ~0UL: nowhere */
	int new_mapping;	/* a mapping ends at @drop */
};

struct run {
	unsigned int extents, over;	/* over: extents longer than LIMIT_NS */
	unsigned int unramped;	/* extents over GROWTH x the bytes timed before */
	double max_ns;
	unsigned long max_bytes;	/* the longest extent's bytes */
};

/* One simulated read: its memory, its segments, its clock, what it saw. */
struct sim {
	const struct mem *m;
	const unsigned long *seg;	/* the iovecs' lengths */
	unsigned int nseg, i;		/* segments; the current one */
	unsigned long in_seg, off, total;
	double now;			/* ns; 0 is the loop's "not timed" */
	int clipped, trace;
	unsigned long timed;		/* bytes timed since the mapping began */
	unsigned long cur;		/* bytes of the extent so far */
	unsigned long *ext;		/* extents' sizes, if not NULL */
	unsigned int next, max;
	struct run *r;
};

/* Nanoseconds to clear [off, off + n) of @m. */
static double sim_ns(const struct mem *m, unsigned long off, unsigned long n,
		     int probe)
{
	unsigned long fast = 0;

	if (probe && m->probe_gbs)
		return n / m->probe_gbs;
	if (off < m->drop)
		fast = m->drop - off < n ? m->drop - off : n;
	return fast / m->gbs + (n - fast) / m->slow_gbs;
}

static size_t sim_count(void *ctx)
{
	struct sim *s = ctx;

	return s->total - s->off;
}

static size_t sim_seg_len(void *ctx, size_t max)
{
	struct sim *s = ctx;
	unsigned long n;

	while (s->i < s->nseg && s->in_seg == s->seg[s->i]) {
		s->i++;		/* the advance skips empty segments */
		s->in_seg = 0;
	}
	n = s->i < s->nseg ? s->seg[s->i] - s->in_seg : 0;
	s->clipped = 0;
	return n < max ? n : max;
}

/* read.c's VMA lookup: a mapping ends at @drop when m->new_mapping. */
static size_t sim_in_vma(void *ctx, size_t n, unsigned long *vm_start)
{
	struct sim *s = ctx;
	const struct mem *m = s->m;

	*vm_start = m->new_mapping && s->off >= m->drop ? 2 : 1;
	if (m->new_mapping && s->off < m->drop && s->off + n > m->drop) {
		s->clipped = 1;
		return m->drop - s->off;
	}
	return n;
}

static size_t sim_zero(void *ctx, const struct fz_extents *x, size_t n,
		       bool *fault)
{
	struct sim *s = ctx;
	struct run *r = s->r;
	double ns;

	*fault = false;
	if (!n)
		return 0;
	/* the extent before this piece ended: the policy started a new one */
	if (s->cur && !x->part && s->ext && s->next < s->max)
		s->ext[s->next++] = s->cur, s->cur = 0;
	else if (s->cur && !x->part)
		s->cur = 0;
	ns = sim_ns(s->m, s->off, n, x->probe);
	if (s->trace)
		printf("  %-5s %10zu bytes at %10lu: %8.3f ms\n",
		       x->probe ? "probe" : "main", n, s->off, ns / 1e6);
	if (r && !x->part) {
		r->extents++;
		if (ns > r->max_ns) {
			r->max_ns = ns;
			r->max_bytes = n;
		}
		r->over += ns > LIMIT_NS;
		/* the invariant: a mapping's first probe aside, the ramp */
		r->unramped += s->timed && n > FZ_EXTENT_GROWTH * s->timed;
		s->timed = s->clipped ? 0 : s->timed + n;
	}
	s->now += ns;
	s->off += n;
	s->in_seg += n;
	s->cur += n;
	return n;
}

static unsigned long long sim_clock(void *ctx)
{
	return (unsigned long long)((struct sim *)ctx)->now;
}

static bool sim_no(void *ctx)
{
	(void)ctx;
	return false;
}

static const struct fz_read_env sim_env = {
	.count		= sim_count,
	.seg_len	= sim_seg_len,
	.in_vma		= sim_in_vma,
	.zero		= sim_zero,
	.clock		= sim_clock,
	.stop		= sim_no,
	.resched	= sim_no,
};

/* One read() of @total bytes of @m. */
static void sim_read(const struct mem *m, unsigned long total,
		     struct run *r, int trace)
{
	struct sim s = { .m = m, .seg = &total, .nseg = 1, .total = total,
			 .now = 1e9, .trace = trace, .r = r };
	bool faulted;

	memset(r, 0, sizeof(*r));
	fz_read_extents(&sim_env, &s, FZ_CHUNK_AUTO, &faulted);
}

/*
 * One readv() of @nseg segments of one mapping at @gbs; the sizes of its
 * extents (an extent's pieces added up) into @ext, their number returned.
 */
static unsigned int sim_readv(const unsigned long *seg, unsigned int nseg,
			      double gbs, unsigned long *ext, unsigned int max)
{
	struct mem m = { .gbs = gbs, .slow_gbs = gbs, .drop = ~0UL };
	struct sim s = { .m = &m, .seg = seg, .nseg = nseg, .now = 1e9,
			 .ext = ext, .max = max };
	unsigned int i;
	bool faulted;

	for (i = 0; i < nseg; i++)
		s.total += seg[i];
	fz_read_extents(&sim_env, &s, FZ_CHUNK_AUTO, &faulted);
	if (s.cur && s.next < max)
		ext[s.next++] = s.cur;
	return s.next;
}

static unsigned int failed;

static void report(int pass, const char *name, const struct run *r,
		   const char *note)
{
	pass = pass && !r->unramped;
	printf("%sok %s extents %u, longest %.2f ms (%lu bytes), over 2x budget: %u, over %lux the bytes timed before: %u%s%s\n",
	       pass ? "" : "not ", name, r->extents, r->max_ns / 1e6,
	       r->max_bytes, r->over, FZ_EXTENT_GROWTH, r->unramped,
	       note ? "; " : "", note ? note : "");
	failed += !pass;
}

/* The extents of 64 MiB are read()'s however readv() cuts the bytes. */
static void readv_cuts(void)
{
	static unsigned long seg[20480];
	static const char * const names[] = {
		"one_segment", "empty_first", "empty_around", "4096_first",
		"1_byte_first", "4096_slices", "16K_slices", "3_uneven",
	};
	unsigned long ref[64], ext[64], total = 64UL << 20;
	unsigned int c, i, n, nref = 0, nseg;
	int same;

	for (c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
		nseg = 0;
		switch (c) {
		case 0:
			seg[nseg++] = total;
			break;
		case 1:
			seg[nseg++] = 0;
			seg[nseg++] = total;
			break;
		case 2:
			seg[nseg++] = 0;
			seg[nseg++] = 0;
			seg[nseg++] = total;
			seg[nseg++] = 0;
			break;
		case 3:
		case 4:
			seg[nseg++] = c == 3 ? 4096 : 1;
			seg[nseg++] = total - seg[0];
			break;
		case 5:
		case 6:
			for (i = 0; i < total / (c == 5 ? 4096 : 16384); i++) {
				seg[nseg++] = c == 5 ? 4096 : 16384;
				if (i % 7 == 0)
					seg[nseg++] = 0;
			}
			break;
		default:
			seg[nseg++] = 100000;
			seg[nseg++] = 20UL << 20;
			seg[nseg++] = total - 100000 - (20UL << 20);
			break;
		}
		n = sim_readv(seg, nseg, 10, ext, 64);
		if (!c) {
			memcpy(ref, ext, sizeof(ext));
			nref = n;
		}
		same = n == nref && !memcmp(ref, ext, n * sizeof(ext[0]));
		printf("%sok readv_64MiB_%s %u segments: extents %u (read(): %u)\n",
		       same ? "" : "not ", names[c], nseg, n, nref);
		failed += !same;
	}
}

/*
 * Which store reads get (fz_policy_read_loop()) with read.c's per-open
 * run: @nreads reads of @bs bytes, each into the next slot of a ring of
 * @ring bytes (0: moving on for ever); the reads that got the cold store.
 */
static unsigned int sim_stream(unsigned long bs, unsigned long ring,
			       unsigned int nreads, unsigned long nt)
{
	unsigned long end = 0, streamed = 0, at = 4096, run;
	unsigned int i, cold = 0;

	for (i = 0; i < nreads; i++) {
		if (ring && at + bs > 4096 + ring)
			at = 4096;
		run = end == at ? streamed : 0;
		cold += fz_policy_read_loop(FZ_LOOP_AUTO, nt, FZ_LOOP_CLZERO,
					    FZ_COLD_THRESHOLD, bs,
					    run + bs) == FZ_LOOP_CLZERO;
		streamed = run + bs;
		end = at + bs;
		at = end;
	}
	return cold;
}

/* A stream of small reads gets the cold store, a ring the cache holds not. */
static void stream_cases(void)
{
	unsigned long nt = 16UL << 20;	/* Zen 4: half its 32 MiB L3 */
	unsigned int n, reads = (4UL << 30) / (64 << 10);

	n = sim_stream(64 << 10, 0, reads, nt);
	printf("%sok stream_64K_reads_through_4GiB_get_the_cold_store %u of %u reads\n",
	       n >= reads - nt / (64 << 10) ? "" : "not ", n, reads);
	failed += n < reads - nt / (64 << 10);
	n = sim_stream(64 << 10, 4UL << 20, reads, nt);
	printf("%sok ring_of_4MiB_keeps_the_cached_store %u of %u reads cold\n",
	       n ? "not " : "", n, reads);
	failed += !!n;
	n = sim_stream(1UL << 20, 2UL << 20, 4096, nt);
	printf("%sok double_1MiB_buffers_keep_the_cached_store %u of 4096 reads cold\n",
	       n ? "not " : "", n);
	failed += !!n;
}

int main(int argc, char **argv)
{
	static const double rates[] = { 0.5, 2, 10 };
	unsigned long total = 256UL << 20, d, worst_d = 0;
	struct run r, worst;
	struct mem m;
	char name[96];
	unsigned int i;

	if (argc == 4 && !strcmp(argv[1], "--trace")) {
		m = (struct mem){ .gbs = atof(argv[3]) * GB / 1e9,
				  .slow_gbs = 1, .drop = ~0UL };
		sim_read(&m, strtoul(argv[2], NULL, 0), &r, 1);
		printf("extents %u\n", r.extents);
		return 0;
	}

	/* uniform memory under probes the cache holds (100 GB/s) */
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		m = (struct mem){ .probe_gbs = 100, .gbs = rates[i],
				  .slow_gbs = rates[i], .drop = ~0UL };
		sim_read(&m, total, &r, 0);
		snprintf(name, sizeof(name), "hot_probe_memory_%gGBps", rates[i]);
		report(!r.over, name, &r, NULL);
	}

	/* 10 GB/s, then 0.1 GB/s from a mapping boundary at each offset */
	worst.max_ns = 0;
	for (d = 4096; d < total; d = d * 5 / 4 + 4096) {
		m = (struct mem){ .probe_gbs = 100, .gbs = 10, .slow_gbs = 0.1,
				  .drop = d & ~4095UL, .new_mapping = 1 };
		sim_read(&m, total, &r, 0);
		if (r.over || r.max_ns > worst.max_ns) {
			worst = r;
			worst_d = d & ~4095UL;
		}
		if (r.over)
			break;
	}
	snprintf(name, sizeof(name), "drop_100x_at_mapping_end_worst_at_%lu", worst_d);
	report(!worst.over, name, &worst, NULL);

	/*
	 * 10 GB/s, then 0.1 GB/s inside one mapping, probes measuring the
	 * memory: the extent the drop falls in runs long (no probe saw the
	 * slow memory; docs/design-read.md), every one after it is within.
	 */
	worst.max_ns = 0;
	for (d = 4096; d < total; d = d * 5 / 4 + 4096) {
		m = (struct mem){ .gbs = 10, .slow_gbs = 0.1, .drop = d & ~4095UL };
		sim_read(&m, total, &r, 0);
		if (r.over > worst.over || r.max_ns > worst.max_ns) {
			worst = r;
			worst_d = d & ~4095UL;
		}
	}
	snprintf(name, sizeof(name), "drop_100x_in_mapping_worst_at_%lu", worst_d);
	report(worst.over <= 1, name, &worst,
	       "only the extent the drop falls in may run long");

	/* the same drop under a cache-hot probe: the ramp, not the probe, bounds it */
	m = (struct mem){ .probe_gbs = 100, .gbs = 0.1, .slow_gbs = 0.1,
			  .drop = ~0UL };
	sim_read(&m, total, &r, 0);
	report(!r.over, "hot_probe_memory_0.1GBps", &r, NULL);

	/* a uniform fast read of 64 MiB: how many extents the ramp costs */
	m = (struct mem){ .gbs = 50, .slow_gbs = 50, .drop = ~0UL };
	sim_read(&m, 64UL << 20, &r, 0);
	report(r.extents <= 12, "uniform_50GBps_64MiB_read", &r, NULL);

	readv_cuts();
	stream_cases();
	return failed ? 1 : 0;
}
