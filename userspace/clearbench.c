// SPDX-License-Identifier: GPL-2.0
/*
 * clearbench - time the driver's clearing loops on the real CPU.
 *
 * driver/arch/x86/clear_loops.S is assembled and linked in unchanged, so this measures
 * exactly the instructions the module executes, minus the user-access
 * bracketing (STAC/CLAC) of the kernel's fz_clear_user_*() flavour.
 *
 * Sections:
 *   matrix  every loop x chunk size x buffer size (cache- and DRAM-resident),
 *           as "perf bench mem memset -k": the buffer is cleared chunk by chunk;
 *           ratio against the stock kernel's way (unrolled, 4 KiB chunks);
 *           --chunks and --loops narrow it to chosen configurations (what
 *           bench/perfbench.sh runs beside perf's own)
 *   short   8..4096-byte clears, cache hot: unrolled vs rep_stosb vs erms,
 *           the evidence for fz_erms_threshold
 *   chunk   the read path's chunk size (64K..8M) on a 64 MiB and 1 GiB
 *           destination with rep_stosb
 *   fault   (not in the default set) the clearing a first fault of a 2 MiB
 *           shared huge page costs, per kernel and mode: the allocator's
 *           pass (init_on_alloc=1) and shmem's 4 KiB pass, against
 *           shared_clear=driver's one pass over the folio; 1 GiB walked a
 *           folio at a time with rep_stosb, the loop of clear_page_erms()
 *           and of clear_pages() on ERMS CPUs
 *   stores  (not in the default set) every store the CPU has (rep stosb,
 *           rep stosq, unrolled, movnti, clzero where it runs) at 1M..1G,
 *           into one reused buffer (dd) and into a cold 4 GiB region
 *           cleared bs at a time (perf bench mem memset -k bs -s 4GB)
 *   calibrate (make calibrate, not in the default set) this machine's
 *           erms_threshold and nt_threshold, measured with the driver's
 *           extent policy (driver/policy.h) beside the ones the driver
 *           derives, and the modprobe.d line
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "loops.h"
#include "policy.h"

#define MAX_CFGS	128
#define WARM_LIMIT	(8u << 20)	/* buffers up to this are "cache-resident" */

/**
 * struct cfg - one configuration to time
 * @workload: result group, e.g. "matrix-1G"
 * @loop: which clear loop
 * @buf: destination, @len bytes, cleared @chunk bytes per loop call
 * @chunk2: if set, each 2 MiB folio is cleared once more, @chunk2 bytes
 *          per call, after its first pass (the fault section)
 * @passes: whole-buffer passes per sample (calibrated)
 * @warm: run one untimed pass before each sample (cache-resident buffers)
 * @gbs: samples in GB/s (1e9 bytes per second)
 * @ns_call: samples in ns per loop call
 */
struct cfg {
	char workload[BL_NAME_LEN];
	enum fz_loop loop;
	char *buf;
	size_t len, chunk, chunk2;
	unsigned long passes;
	bool warm;
	double gbs[BL_MAX_REPS];
	double ns_call[BL_MAX_REPS];
};

struct opts {
	bool quick, json, thp;
	unsigned int reps;
	double target_ms;
	int cpu;
	const char *csv, *mode, *sections;
	size_t bufs[8], dests[8], chunks[8];
	int nbufs, ndests, nchunks;
	unsigned int loop_mask;		/* matrix loops: bit (1 << enum fz_loop) */
	bool narrowed;			/* --chunks or --loops given */
	enum fz_loop chunk_loop;
};

static struct cfg cfgs[MAX_CFGS];
static unsigned int ncfgs;

static struct cfg *add_cfg(const char *workload, enum fz_loop loop, char *buf,
			   size_t len, size_t chunk)
{
	struct cfg *c;

	if (ncfgs == MAX_CFGS)
		bl_die("too many configurations");
	c = &cfgs[ncfgs++];
	memset(c, 0, sizeof(*c));
	snprintf(c->workload, sizeof(c->workload), "%s", workload);
	c->loop = loop;
	c->buf = buf;
	c->len = len;
	c->chunk = chunk;
	c->passes = 1;
	c->warm = len <= WARM_LIMIT;
	return c;
}

#define FOLIO_LEN	(2u << 20)

/* One pass over the buffer a 2 MiB folio at a time, each cleared twice. */
static void folio_passes(const struct cfg *c, unsigned long passes)
{
	size_t off;

	while (passes--)
		for (off = 0; off + FOLIO_LEN <= c->len; off += FOLIO_LEN) {
			loops[c->loop](c->buf + off, FOLIO_LEN, c->chunk, 1);
			loops[c->loop](c->buf + off, FOLIO_LEN, c->chunk2, 1);
		}
}

static uint64_t time_passes(const struct cfg *c, unsigned long passes)
{
	uint64_t t0;

	if (c->warm)
		loops[c->loop](c->buf, c->len, c->chunk, 1);
	t0 = bl_now_ns();
	if (c->chunk2)
		folio_passes(c, passes);
	else
		loops[c->loop](c->buf, c->len, c->chunk, passes);
	return BL_MAX(bl_now_ns() - t0, 1);
}

static uint64_t time_passes_cb(void *c, unsigned long passes)
{
	return time_passes(c, passes);
}

/* Pick the pass count that makes one sample last about @target_ns. */
static void calibrate(struct cfg *c, double target_ns)
{
	c->passes = bl_calibrate(time_passes_cb, c, target_ns, 1ul << 40);
}

static void sample(struct cfg *c, unsigned int rep)
{
	uint64_t t = time_passes(c, c->passes);
	double calls = (double)c->passes * ((c->len + c->chunk - 1) / c->chunk);

	c->gbs[rep] = (double)c->len * c->passes / t;
	c->ns_call[rep] = t / calls;
}

/*
 * Time every configuration @reps times, interleaved: each round visits all
 * configurations, starting at a different one and alternating direction, so
 * drifting host noise spreads over all of them instead of biasing a few.
 */
static void run_cfgs(const struct opts *o, const char *what)
{
	unsigned int r, k, i;

	for (i = 0; i < ncfgs; i++)
		calibrate(&cfgs[i], o->target_ms * 1e6);
	for (r = 0; r < o->reps; r++) {
		bl_progress(r + 1, o->reps, "%s: %u configurations", what, ncfgs);
		for (k = 0; k < ncfgs; k++) {
			i = (k + r * 7) % ncfgs;
			if (r & 1)
				i = ncfgs - 1 - i;
			sample(&cfgs[i], r);
		}
	}
}

static char *fmt(size_t v)
{
	static char bufs[8][16];
	static unsigned int n;

	return (char *)bl_fmt_size(v, bufs[n++ % 8], sizeof(bufs[0]));
}

/* Turn the samples into results (@ns_aux: add ns per call) and reset. */
static void collect(struct bl_report *rep, unsigned int reps, bool ns_aux)
{
	unsigned int i;

	for (i = 0; i < ncfgs; i++) {
		struct cfg *c = &cfgs[i];
		bool by_len = !strcmp(c->workload, "short") ||
			      !strncmp(c->workload, "cal-", 4);
		struct bl_result *r;
		struct bl_stats ns;

		r = bl_add(rep, c->workload, fmt(by_len ? c->len : c->chunk),
			   loop_names[c->loop], "GB/s", c->gbs, reps);
		if (ns_aux) {
			bl_stats(c->ns_call, reps, &ns);
			snprintf(r->aux_name, sizeof(r->aux_name), "ns_per_call");
			r->aux = ns.med;
		}
	}
	ncfgs = 0;
}

/* Set every result's ratio against (@workload, @param, @series). */
static void set_ratios(struct bl_report *rep, unsigned int from,
		       const char *param, const char *series, bool same_param)
{
	unsigned int i;

	for (i = from; i < rep->nres; i++) {
		struct bl_result *r = &rep->res[i];
		struct bl_result *base;

		base = bl_find(rep, r->workload, same_param ? r->param : param,
			       series);
		bl_set_ratio(r, base);
	}
}

static double med_of(const struct bl_report *rep, const char *workload,
		     const char *param, enum fz_loop loop)
{
	struct bl_result *r = bl_find(rep, workload, param, loop_names[loop]);

	return r && r->st.n ? r->st.med : NAN;
}

/* Best of the repetitions: what a busy host lets through at best. */
/* --- section: strategy x chunk x buffer ---------------------------------- */

static const size_t matrix_chunks[] = {
	4u << 10, 64u << 10, 2u << 20, 32u << 20, 1u << 30,
};

static void summarize_matrix(struct bl_report *rep, const char *wl,
			     size_t len)
{
	char by_chunk[160] = "";
	size_t chunk = 0, o = 0;
	unsigned int i;
	double best = 0;
	int best_loop = -1;
	const char *p;

	for (i = 0; i < BL_ARRAY_SIZE(matrix_chunks) && matrix_chunks[i] <= len; i++) {
		chunk = matrix_chunks[i];
		p = fmt(chunk);
		o += snprintf(by_chunk + o, sizeof(by_chunk) - o, "%s%s %.2fx",
			      i ? ", " : "", p,
			      med_of(rep, wl, p, FZ_LOOP_NT) /
			      med_of(rep, wl, p, BL_LOOP_STRING));
	}
	bl_note(rep, "result.nt_vs_stosb", "%s buffer, nt/rep_stosb by chunk: %s",
		fmt(len), by_chunk);
	p = fmt(chunk);
	for (i = 0; i < FZ_NR_LOOPS; i++) {
		double v = med_of(rep, wl, p, i);

		if (v > best) {
			best = v;
			best_loop = i;
		}
	}
	if (best_loop >= 0)
		bl_note(rep, "result.best_loop", "%s buffer, %s chunks: %s %.2f GB/s = %.2fx the stock unrolled@4K",
			fmt(len), p, loop_names[best_loop], best,
			best / med_of(rep, wl, "4K", FZ_LOOP_UNROLLED));
}

static void section_matrix(const struct opts *o, struct bl_report *rep,
			   char *buf)
{
	unsigned int b, c, l, from;
	char wl[BL_NAME_LEN];

	for (b = 0; b < (unsigned int)o->nbufs; b++) {
		size_t len = o->bufs[b];

		snprintf(wl, sizeof(wl), "matrix-%s", fmt(len));
		for (c = 0; c < (unsigned int)o->nchunks; c++)
			for (l = 0; l < FZ_NR_LOOPS && o->chunks[c] <= len; l++)
				if (o->loop_mask & (1u << l))
					add_cfg(wl, l, buf, len, o->chunks[c]);
		if (!ncfgs)
			bl_die("matrix-%s: no chunk size <= the buffer", fmt(len));
		run_cfgs(o, wl);
		from = rep->nres;
		collect(rep, o->reps, false);
		set_ratios(rep, from, "4K", loop_names[FZ_LOOP_UNROLLED], false);
		/* the summary compares configurations a narrowed run may lack */
		if (!o->narrowed)
			summarize_matrix(rep, wl, len);
	}
}

/* --- section: short lengths, the ERMS threshold ---------------------------- */

static const size_t short_lens[] = {
	8, 16, 32, 48, 64, 96, 128, 192, 256, 320, 384, 448, 512, 576,
	640, 704, 768, 896, 1024,
	1536, 2048, 3072, 4096,
};

/* Smallest length from which rep_stosb is at least as fast as unrolled for good. */
static void summarize_short(struct bl_report *rep)
{
	int i, n = BL_ARRAY_SIZE(short_lens);
	int cross = -1;

	for (i = n - 1; i >= 0; i--) {
		const char *p = fmt(short_lens[i]);

		if (med_of(rep, "short", p, BL_LOOP_STRING) <
		    med_of(rep, "short", p, FZ_LOOP_UNROLLED))
			break;
		cross = i;
	}
#ifdef __x86_64__
	if (cross < 0)
		bl_note(rep, "result.erms_crossover", "rep_stosb never catches up with unrolled up to 4096 bytes (fz_erms_threshold default: %lu)",
			fz_erms_threshold);
	else
		bl_note(rep, "result.erms_crossover", "rep_stosb >= unrolled from %zu bytes up (previous length %s; fz_erms_threshold default: %lu)",
			short_lens[cross], cross ? fmt(short_lens[cross - 1]) : "none",
			fz_erms_threshold);
#else
	if (cross < 0)
		bl_note(rep, "result.string_crossover", "%s never catches up with unrolled up to 4096 bytes",
			loop_names[BL_LOOP_STRING]);
	else
		bl_note(rep, "result.string_crossover", "%s >= unrolled from %zu bytes up (previous length %s)",
			loop_names[BL_LOOP_STRING], short_lens[cross],
			cross ? fmt(short_lens[cross - 1]) : "none");
#endif
}

static void section_short(const struct opts *o, struct bl_report *rep,
			  char *buf)
{
	static const enum fz_loop which[] = {
		FZ_LOOP_UNROLLED, BL_LOOP_STRING,
#ifdef __x86_64__
		BL_LOOP_SHORT,	/* erms: the unrolled loop below its threshold */
#endif
	};
	unsigned int i, l, from = rep->nres;

	if (!loop_runs(BL_LOOP_STRING, NULL))
		return;
	for (i = 0; i < BL_ARRAY_SIZE(short_lens); i++)
		for (l = 0; l < BL_ARRAY_SIZE(which); l++)
			add_cfg("short", which[l], buf, short_lens[i],
				short_lens[i])->warm = true;
	run_cfgs(o, "short");
	collect(rep, o->reps, true);
	set_ratios(rep, from, NULL, loop_names[FZ_LOOP_UNROLLED], true);
	summarize_short(rep);
}

/* --- section: the read path's chunk size ----------------------------------- */

/* The driver picks from 64K..8M (1 ms at 10 GB/s); 16M and 32M show the cost of that cap. */
#define CHUNK_BUDGET	(8u << 20)
static const size_t read_chunks[] = {
	64u << 10, 256u << 10, 1u << 20, 2u << 20, 4u << 20, 8u << 20,
	16u << 20, 32u << 20,
};

/* Best chunk among those up to @cap; the smallest within 1% of it in *@ok. */
static unsigned int best_chunk(const struct bl_report *rep, const char *wl,
			       enum fz_loop loop, size_t cap, unsigned int *ok)
{
	unsigned int i, best = 0;
	double v, top = 0;

	for (i = 0; i < BL_ARRAY_SIZE(read_chunks) && read_chunks[i] <= cap; i++) {
		v = med_of(rep, wl, fmt(read_chunks[i]), loop);
		if (v > top) {
			top = v;
			best = i;
		}
	}
	for (*ok = 0; *ok < best; (*ok)++)
		if (med_of(rep, wl, fmt(read_chunks[*ok]), loop) >= 0.99 * top)
			break;
	return best;
}

static void summarize_chunk(struct bl_report *rep, const char *wl,
			    enum fz_loop loop, size_t dest)
{
	unsigned int b, ok, ball, okall;
	const char *ln = loop_names[loop];

	b = best_chunk(rep, wl, loop, BL_MIN(dest, CHUNK_BUDGET), &ok);
	ball = best_chunk(rep, wl, loop, dest, &okall);
	bl_note(rep, "result.best_chunk", "%s, %s, chunks <= 8M: best %s (%.2f GB/s); smallest within 1%% of it: %s",
		wl, ln, fmt(read_chunks[b]),
		med_of(rep, wl, fmt(read_chunks[b]), loop), fmt(read_chunks[ok]));
	if (ball != b)
		bl_note(rep, "result.best_chunk_any", "%s, %s, beyond the 8M budget: %s (%.2f GB/s = %.2fx the best <= 8M)",
			wl, ln, fmt(read_chunks[ball]),
			med_of(rep, wl, fmt(read_chunks[ball]), loop),
			med_of(rep, wl, fmt(read_chunks[ball]), loop) /
			med_of(rep, wl, fmt(read_chunks[b]), loop));
}

static void section_chunk(const struct opts *o, struct bl_report *rep,
			  char *buf)
{
	unsigned int d, c, from;
	char wl[BL_NAME_LEN];

	for (d = 0; d < (unsigned int)o->ndests; d++) {
		snprintf(wl, sizeof(wl), "chunk-%s", fmt(o->dests[d]));
		for (c = 0; c < BL_ARRAY_SIZE(read_chunks); c++)
			if (read_chunks[c] <= o->dests[d])
				add_cfg(wl, o->chunk_loop, buf, o->dests[d],
					read_chunks[c]);
		run_cfgs(o, wl);
		from = rep->nres;
		collect(rep, o->reps, false);
		set_ratios(rep, from, "64K", loop_names[o->chunk_loop], false);
		summarize_chunk(rep, wl, o->chunk_loop, o->dests[d]);
	}
}

/* --- section: fault, a shared huge page's first-fault clearing ---------- */

/*
 * What each kernel and mode clears on the first fault of a 2 MiB shmem
 * folio (driver/shared_clear.c has the sources): first pass, second pass.
 * The ratio is against the same kernel's shmem default under the same
 * init_on_alloc; GB/s counts each folio's bytes once.
 */
static const struct fault_case {
	const char *name, *base;
	size_t first, second;
	enum fz_loop loop;
} fault_cases[] = {
	{ "6x-shmem-ioa1", "6x-shmem-ioa1", 4u << 10, 4u << 10, BL_LOOP_STRING },
	{ "6x-driver-ioa1", "6x-shmem-ioa1", 4u << 10, 0, BL_LOOP_STRING },
	{ "7x-shmem-ioa1", "7x-shmem-ioa1", FOLIO_LEN, 4u << 10, BL_LOOP_STRING },
	{ "7x-driver-ioa1", "7x-shmem-ioa1", FOLIO_LEN, 0, BL_LOOP_STRING },
	{ "shmem-ioa0", "shmem-ioa0", 4u << 10, 0, BL_LOOP_STRING },
	{ "driver-ioa0", "shmem-ioa0", FOLIO_LEN, 0, BL_LOOP_STRING },
	/*
	 * The driver's one pass with the cold-memory stores: only
	 * where init_on_alloc=0, since with =1 the allocator's clear is the
	 * only one and the driver's store does not run (shared_clear.c).
	 */
	{ "driver-ioa0", "shmem-ioa0", FOLIO_LEN, 0, FZ_LOOP_NT },
	{ "driver-ioa0", "shmem-ioa0", FOLIO_LEN, 0, BL_LOOP_COLD },
};

/* Whether the fault case named @workload ("fault-<name>") has base @base. */
static bool fault_base_of(const char *workload, const char *base)
{
	unsigned int k;

	for (k = 0; k < BL_ARRAY_SIZE(fault_cases); k++)
		if (!strcmp(workload + strlen("fault-"), fault_cases[k].name))
			return !strcmp(fault_cases[k].base, base);
	return false;
}

static void section_fault(const struct opts *o, struct bl_report *rep,
			  char *buf)
{
	size_t len = 1u << 30;
	unsigned int i, from;
	char wl[BL_NAME_LEN];

	for (i = 0; i < BL_ARRAY_SIZE(fault_cases); i++) {
		const struct fault_case *f = &fault_cases[i];
		struct cfg *c;

		if (!loop_runs(f->loop, NULL))
			continue;
		snprintf(wl, sizeof(wl), "fault-%s", f->name);
		c = add_cfg(wl, f->loop, buf, len, f->first);
		c->chunk2 = f->second;
	}
	run_cfgs(o, "fault");
	from = rep->nres;
	collect(rep, o->reps, false);
	for (i = from; i < rep->nres; i++) {
		struct bl_result *r = &rep->res[i], *base = NULL;
		unsigned int k;

		/* the base is the case named by this one's base, with rep_stosb */
		for (k = 0; k < BL_ARRAY_SIZE(fault_cases) && !base; k++) {
			const struct fault_case *b = &fault_cases[k];

			snprintf(wl, sizeof(wl), "fault-%s", b->base);
			if (strcmp(b->name, b->base) || b->loop != BL_LOOP_STRING)
				continue;
			if (!strcmp(r->workload + strlen("fault-"), b->name) ||
			    fault_base_of(r->workload, b->name))
				base = bl_find(rep, wl, fmt(b->first),
					       loop_names[BL_LOOP_STRING]);
		}
		bl_set_ratio(r, base);
	}
}

/* --- section: stores, every store in the reused and the cold pattern ---- */

#define STORES_COLD	(4ul << 30)	/* perf bench mem memset -s 4GB */

static const size_t store_sizes[] = {
	1u << 20, 4u << 20, 16u << 20, 32u << 20, 64u << 20, 256u << 20, 1u << 30,
};

/*
 * Every loop the CPU runs at each bs: "stores-reused" clears one bs
 * buffer again and again (dd's pattern: the destination is as hot as the
 * cache lets it be), "stores-cold" clears a 4 GiB region bs at a time
 * (perf bench mem memset -k bs -s 4GB: each chunk is new to the cache).
 * Ratios against rep_stosb at the same bs; the fastest store per bs and
 * pattern is noted.
 */
static void section_stores(const struct opts *o, struct bl_report *rep,
			   char *buf)
{
	static const char * const wls[] = { "stores-reused", "stores-cold" };
	unsigned int i, l, w, from;

	for (w = 0; w < 2; w++) {
		for (i = 0; i < BL_ARRAY_SIZE(store_sizes); i++)
			for (l = 0; l < FZ_NR_LOOPS; l++) {
				size_t bs = store_sizes[i];

				if (l == BL_LOOP_SHORT || !loop_runs(l, NULL))
					continue;	/* erms: rep_stosb at these sizes */
				if (w)
					add_cfg(wls[w], l, buf, STORES_COLD, bs);
				else
					add_cfg(wls[w], l, buf, bs, bs)->warm = true;
			}
		run_cfgs(o, wls[w]);
		from = rep->nres;
		collect(rep, o->reps, false);
		set_ratios(rep, from, NULL, loop_names[BL_LOOP_STRING], true);
		for (i = 0; i < BL_ARRAY_SIZE(store_sizes); i++) {
			const char *p = fmt(store_sizes[i]);
			double best = 0;
			int bl = -1;

			for (l = 0; l < FZ_NR_LOOPS; l++) {
				double v = med_of(rep, wls[w], p, l);

				if (v > best) {
					best = v;
					bl = l;
				}
			}
			if (bl >= 0)
				bl_note(rep, "result.fastest_store", "%s %s: %s %.2f GB/s = %.2fx rep_stosb",
					wls[w], p, loop_names[bl], best,
					best / med_of(rep, wls[w], p, BL_LOOP_STRING));
		}
	}
}

/* --- section: calibrate, this machine's thresholds ---------------------- */


/*
 * Read sizes for the non-temporal crossover: from a few L2s (4 MiB) up to
 * the driver's extents (32 MiB) and beyond.  A reused buffer that the
 * last-level cache would hold may not stay there on a shared host: on the
 * Xeon VM of results/README-xeon-stores-native.txt (48 MiB L3) movnti beat rep stosb from 8 MiB on,
 * where glibc's rule (LLC / 4, at least 3/4 of a thread's share) says 18.
 */
#define CAL_SHORT_MIN	64
#define CAL_SHORT_MAX	2048
#define CAL_SHORT_STEP	64

static size_t cal_max(const struct opts *o)
{
	return o->quick ? 256u << 20 : 1u << 30;
}

#ifdef __x86_64__
static const size_t cal_sizes[] = {
	4u << 20, 8u << 20, 16u << 20,
	32u << 20, 64u << 20, 128u << 20, 256u << 20, 512u << 20, 1u << 30,
};

static double best_of(const struct bl_report *rep, const char *workload,
		      const char *param, enum fz_loop loop)
{
	struct bl_result *r = bl_find(rep, workload, param, loop_names[loop]);

	return r && r->st.n ? r->st.max : NAN;
}

/*
 * Loop @a against loop @b at (@workload, @param), beyond the noise: 1
 * faster, -1 slower, 0 when the medians differ by less than the two
 * spreads added (bl_ratio_noise()'s rule): such a row decides nothing.
 */
static int cmp_loops(const struct bl_report *rep, const char *workload,
		     const char *param, enum fz_loop a, enum fz_loop b)
{
	struct bl_result ra, *rb = bl_find(rep, workload, param, loop_names[b]);
	struct bl_result *pa = bl_find(rep, workload, param, loop_names[a]);

	if (!pa || !rb)
		return 0;
	ra = *pa;
	bl_set_ratio(&ra, rb);
	if (isnan(ra.ratio) || bl_ratio_noise(&ra))
		return 0;
	return ra.ratio > 1 ? 1 : -1;
}

/*
 * (a) The length from which rep stosb stays level with or ahead of the
 * unrolled loop (cache hot), the erms_threshold to use: from the longest
 * length down, the first where it is slower beyond the noise ends it.  0
 * if that is the longest.  *@sure: the length that decided it was beyond
 * the noise (the one that ended it, else the shortest, which must then be
 * a win): no advice otherwise.
 */
static size_t cal_erms(const struct bl_report *rep, bool *sure)
{
	size_t len, cross = 0;
	int c = 0;

	for (len = CAL_SHORT_MAX; len >= CAL_SHORT_MIN; len -= CAL_SHORT_STEP) {
		c = cmp_loops(rep, "cal-short", fmt(len), BL_LOOP_STRING,
			      FZ_LOOP_UNROLLED);
		if (c < 0)
			break;
		cross = len;
	}
	*sure = c != 0;
	return cross;
}

/*
 * (b) The read size from which the non-temporal store @big (the one
 * nt_threshold selects: fz_policy_nt_loop()) beats the driver's own loop
 * for good, beyond the noise, in a read's longest extents (FZ_EXTENT_MAX,
 * the most the driver clears in one call on every preemption model):
 * nt_threshold.  0 if it never does.  *@sure as in cal_erms(): the size
 * that ended the run of wins was beyond the noise too.  The one-call
 * series is printed beside it for comparison, not used.
 */
static size_t cal_nt(const struct bl_report *rep, const struct opts *o,
		     enum fz_loop own, enum fz_loop big, bool *sure)
{
	size_t thr = 0;
	int i, c = 1;

	for (i = BL_ARRAY_SIZE(cal_sizes) - 1; i >= 0; i--) {
		if (cal_sizes[i] > cal_max(o))
			continue;
		c = cmp_loops(rep, "cal-nt-coop", fmt(cal_sizes[i]), big, own);
		if (c <= 0)
			break;
		thr = cal_sizes[i];
	}
	*sure = c != 0;
	return thr;
}

static void section_calibrate(const struct opts *o, struct bl_report *rep,
			      char *buf)
{
	const char *erms_why, *nt_why;
	size_t len, erms, nt, extent;
	unsigned long derms, dnt;
	struct fz_cpu cpu;
	enum fz_loop own, big;
	bool clzero = loop_runs(BL_LOOP_COLD, NULL);
	bool erms_sure, nt_sure;
	unsigned int i, from;
	char line[256];

	bl_fz_cpu(&cpu);
	own = fz_policy_variant(&cpu);
	derms = fz_policy_erms_threshold(&cpu, &erms_why);
	dnt = fz_policy_nt_threshold(&cpu, clzero, &nt_why);
	big = fz_policy_nt_loop(fz_policy_cold_loop(&cpu, clzero, NULL));
	bl_note(rep, "cal.cpu", "vendor %s, rep_good %d erms %d fsrs %d, variant %s; last-level cache %lu KiB (%lu KiB per thread) from %s",
		cpu.vendor == FZ_VENDOR_INTEL ? "Intel" : cpu.vendor == FZ_VENDOR_AMD ? "AMD" : "other",
		cpu.rep_good, cpu.erms, cpu.fsrs, loop_names[own],
		cpu.llc_size >> 10, cpu.llc_per_thread >> 10, cpu.llc_from);

	from = rep->nres;
	for (len = CAL_SHORT_MIN; len <= CAL_SHORT_MAX; len += CAL_SHORT_STEP) {
		add_cfg("cal-short", FZ_LOOP_UNROLLED, buf, len, len)->warm = true;
		add_cfg("cal-short", BL_LOOP_STRING, buf, len, len)->warm = true;
	}
	run_cfgs(o, "calibrate: short clears");
	collect(rep, o->reps, true);
	set_ratios(rep, from, NULL, loop_names[FZ_LOOP_UNROLLED], true);

	/* own loop for the erms variant below its threshold: as the driver */
	fz_erms_threshold = derms;
	from = rep->nres;
	for (i = 0; i < BL_ARRAY_SIZE(cal_sizes) && cal_sizes[i] <= cal_max(o); i++) {
		extent = FZ_EXTENT_MAX;	/* a read's longest extent (policy.h) */
		add_cfg("cal-nt-coop", own, buf, cal_sizes[i], extent);
		add_cfg("cal-nt-coop", big, buf, cal_sizes[i], extent);
		add_cfg("cal-nt-onecall", own, buf, cal_sizes[i], cal_sizes[i]);
		add_cfg("cal-nt-onecall", big, buf, cal_sizes[i], cal_sizes[i]);
	}
	run_cfgs(o, "calibrate: the non-temporal store vs the own loop");
	collect(rep, o->reps, false);
	for (i = from; i < rep->nres; i++) {
		struct bl_result *r = &rep->res[i];
		bl_set_ratio(r, bl_find(rep, r->workload, r->param, loop_names[own]));
	}

	erms = cal_erms(rep, &erms_sure);
	nt = cal_nt(rep, o, own, big, &nt_sure);
	bl_note(rep, "result.erms_threshold", "measured %zu (rep stosb level or ahead of unrolled from there up to %d B%s)%s; derived %lu (%s)",
		erms, CAL_SHORT_MAX, erms ? "" : ": never",
		erms_sure ? "" : " WITHIN THE NOISE: the length that decided it has a spread above its effect",
		derms, erms_why);
	if (!erms)
		erms = CAL_SHORT_MAX;
	snprintf(line, sizeof(line), "%s", "");
	for (i = 0; i < BL_ARRAY_SIZE(cal_sizes) && cal_sizes[i] <= cal_max(o); i++) {
		const char *p = fmt(cal_sizes[i]);

		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s %.2f/%.2f",
			 i ? ", " : "", p,
			 best_of(rep, "cal-nt-coop", p, big) /
			 best_of(rep, "cal-nt-coop", p, own),
			 best_of(rep, "cal-nt-onecall", p, big) /
			 best_of(rep, "cal-nt-onecall", p, own));
	}
	bl_note(rep, "result.nt_vs_own", "%s/%s by read size (best of each), 32M extents / one call: %s",
		loop_names[big], loop_names[own], line);
	bl_note(rep, "result.nt_threshold", "measured %zu%s%s; derived %lu (%s)",
		nt, nt ? "" : " (the non-temporal store never wins in 32 MiB extents)",
		nt_sure ? "" : " WITHIN THE NOISE: the size that decided it has a spread above its effect",
		dnt, nt_why);
	/* advice only from rows beyond the noise */
	line[0] = 0;
	if (erms_sure)
		snprintf(line, sizeof(line), " erms_threshold=%zu", erms);
	if (nt_sure)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " nt_threshold=%zu", nt);
	if (line[0])
		bl_note(rep, "result.modprobe", "options fastzero%s", line);
	if (!erms_sure || !nt_sure)
		bl_note(rep, "result.no_advice", "%s%s%s: the rows that decide %s within their spread (the table's ?); keep the derived value%s, or measure again on a quiet machine",
			erms_sure ? "" : "erms_threshold", erms_sure || nt_sure ? "" : " and ",
			nt_sure ? "" : "nt_threshold", erms_sure || nt_sure ? "it are" : "them are",
			erms_sure || nt_sure ? "" : "s");
}
#else
static void section_calibrate(const struct opts *o, struct bl_report *rep,
			      char *buf)
{
	(void)o;
	(void)rep;
	(void)buf;
	bl_die("calibrate: x86-64 only: arm64's thresholds are the kernel's and glibc's rules, none is measured");
}
#endif

/* --- self-test: every loop clears exactly [dst, dst + len) ---------------- */

#define ST_GUARD	128	/* poisoned bytes checked on each side */

/*
 * Loop @l on @len bytes at ST_GUARD + @off in @buf: 0 if exactly those
 * bytes are zero afterwards and every guard byte is untouched, else -1
 * with the first wrong byte in @msg.
 */
static int check_clear(char *buf, enum fz_loop l, size_t len, unsigned int off,
		       char *msg, size_t msglen)
{
	size_t j, start = ST_GUARD + off, end = start + len;

	memset(buf, 0xa5, end + ST_GUARD);
	loops[l](buf + start, len, BL_MAX(len, 1), 1);
	for (j = 0; j < end + ST_GUARD; j++) {
		bool in = j >= start && j < end;

		if (buf[j] != (in ? 0 : (char)0xa5)) {
			snprintf(msg, msglen, "len %zu offset %u: byte %zd (from the start) is 0x%02x, want 0x%02x",
				 len, off, (ssize_t)j - (ssize_t)start,
				 (unsigned char)buf[j], in ? 0 : 0xa5);
			return -1;
		}
	}
	return 0;
}

/* The startup check: a few lengths and offsets, every loop the CPU runs. */
static void self_test(char *buf)
{
	static const size_t lens[] = {
		0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 255, 256, 257,
		4095, 4096, 4097, 65539,
	};
	unsigned int l, i, off;
	char msg[160];

	for (l = 0; l < FZ_NR_LOOPS; l++)
		for (i = 0; loop_runs(l, NULL) && i < BL_ARRAY_SIZE(lens); i++)
			for (off = 0; off < 8; off += 3)
				if (check_clear(buf, l, lens[i], off, msg, sizeof(msg)))
					bl_die("self-test: %s %s", loop_names[l], msg);
}

/*
 * --self-test: every loop at every length 0..320 and every offset 0..63
 * from a 64-byte line, then longer lengths around line, page and 2 MiB
 * boundaries; one TAP line per loop (tests/host/t_clear_loops.sh), a
 * loop this CPU cannot run (loop_runs()) a SKIP with the reason.  This is
 * where clzero's bytes, head, tail and partial lengths are proven: the
 * same clear_loops.S code the module assembles, natively.
 */
static int self_test_tap(void)
{
	static const size_t longer[] = {
		511, 512, 513, 1000, 4032, 4095, 4096, 4097, 8191, 65472, 65536,
		65539, (2u << 20) - 1, 2u << 20, (2u << 20) + 65,
	};
	static const unsigned int offs[] = { 0, 1, 8, 31, 63 };
	size_t size = (4u << 20), len;
	unsigned int l, off, i, k, failed = 0;
	char *buf = bl_alloc(size, false);
	const char *why;
	char msg[160];
	int bad;

	printf("1..%d\n", FZ_NR_LOOPS);
	for (l = 0; l < FZ_NR_LOOPS; l++) {
		if (!loop_runs(l, &why)) {
			printf("ok %u - %s_bytes_every_length_and_offset # SKIP %s\n",
			       l + 1, loop_names[l], why);
			continue;
		}
		bad = 0;
		for (len = 0; len <= 320 && !bad; len++)
			for (off = 0; off < 64 && !bad; off++)
				bad = check_clear(buf, l, len, off, msg, sizeof(msg));
		for (i = 0; i < BL_ARRAY_SIZE(longer) && !bad; i++)
			for (k = 0; k < BL_ARRAY_SIZE(offs) && !bad; k++)
				bad = check_clear(buf, l, longer[i], offs[k], msg,
						  sizeof(msg));
		printf("%s %u - %s_bytes_every_length_and_offset%s%s\n",
		       bad ? "not ok" : "ok", l + 1, loop_names[l],
		       bad ? " # " : "", bad ? msg : "");
		failed += bad != 0;
	}
	bl_free(buf, size);
	return failed ? 1 : 0;
}

/* --- options and main ------------------------------------------------------ */

static void usage(void)
{
	fputs("usage: clearbench [--quick] [--reps N] [--target-ms MS] [--csv FILE] [--json]\n"
	      "                  [--cpu N] [--thp] [--mode LABEL] [--sections matrix,short,chunk,fault,stores,calibrate]\n"
	      "                  [--bufs 1M,1G] [--chunks 4K,2M] [--loops rep_stosb,unrolled]\n"
	      "                  [--chunk-dests 64M,1G] [--chunk-loop NAME] [--erms-threshold BYTES]\n"
	      "                  [--self-test]\n"
	      "  Times driver/arch/x86/clear_loops.S in userspace. GB/s = 1e9 bytes/s; spread =\n"
	      "  (max - min) / median over the repetitions; ratio: vs unrolled@4K chunks\n"
	      "  (matrix), vs unrolled (short), vs 64K chunks (chunk).\n"
	      "  --json: JSON on stdout, the table on stderr.\n"
	      "  --self-test: every loop's bytes at many lengths and offsets, TAP.\n", stderr);
	exit(2);
}

static enum fz_loop parse_loop(const char *s)
{
	unsigned int l;

	for (l = 0; l < FZ_NR_LOOPS; l++)
		if (!strcmp(s, loop_names[l]))
			return l;
	bl_die("unknown loop '%s'", s);
}

/* A comma-separated list of loop names, as a mask of (1 << enum fz_loop). */
static unsigned int parse_loop_list(const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	unsigned int mask = 0;

	if (!copy)
		bl_die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		mask |= 1u << parse_loop(tok);
	free(copy);
	if (!mask)
		bl_die("empty loop list '%s'", arg);
	return mask;
}

static void size_list(const char *arg, size_t *out, int *n)
{
	*n = bl_parse_size_list(arg, out, 8);
	if (*n <= 0)
		bl_die("bad size list '%s'", arg);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "reps", required_argument, NULL, 'r' },
		{ "target-ms", required_argument, NULL, 't' },
		{ "csv", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "cpu", required_argument, NULL, 'p' },
		{ "thp", no_argument, NULL, 'H' },
		{ "mode", required_argument, NULL, 'm' },
		{ "sections", required_argument, NULL, 's' },
		{ "bufs", required_argument, NULL, 'b' },
		{ "chunks", required_argument, NULL, 'k' },
		{ "loops", required_argument, NULL, 'L' },
		{ "chunk-dests", required_argument, NULL, 'd' },
		{ "chunk-loop", required_argument, NULL, 'l' },
		{ "erms-threshold", required_argument, NULL, 'e' },
		{ "self-test", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ },
	};
	int ch, reps = 0;
	double target = 0;
#ifdef __x86_64__
	size_t thr;
#endif

	memset(o, 0, sizeof(*o));
	o->cpu = sched_getcpu();
	o->mode = "native";
	o->sections = "matrix,short,chunk";
	o->chunk_loop = BL_LOOP_STRING;
	while ((ch = getopt_long(argc, argv, "qr:t:c:jp:Hm:s:b:k:L:d:l:e:Sh", lo, NULL)) != -1) {
		switch (ch) {
		case 'q': o->quick = true; break;
		case 'r': reps = atoi(optarg); break;
		case 't': target = atof(optarg); break;
		case 'c': o->csv = optarg; break;
		case 'j': o->json = true; break;
		case 'p': o->cpu = atoi(optarg); break;
		case 'H': o->thp = true; break;
		case 'm': o->mode = optarg; break;
		case 's': o->sections = optarg; break;
		case 'b': size_list(optarg, o->bufs, &o->nbufs); break;
		case 'k':
			size_list(optarg, o->chunks, &o->nchunks);
			o->narrowed = true;
			break;
		case 'L':
			o->loop_mask = parse_loop_list(optarg);
			o->narrowed = true;
			break;
		case 'd': size_list(optarg, o->dests, &o->ndests); break;
		case 'l': o->chunk_loop = parse_loop(optarg); break;
#ifdef __x86_64__
		case 'e':
			if (bl_parse_size(optarg, &thr))
				usage();
			fz_erms_threshold = thr;
			break;
#endif
		case 'S': exit(self_test_tap());
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	o->reps = reps > 0 ? (unsigned int)BL_MIN(reps, BL_MAX_REPS) : o->quick ? 3 : 9;
	o->target_ms = target > 0 ? target : o->quick ? 10 : 50;
	if (!o->nbufs)
		size_list(o->quick ? "1M,256M" : "1M,1G", o->bufs, &o->nbufs);
	if (!o->ndests)
		size_list(o->quick ? "64M,256M" : "64M,1G", o->dests, &o->ndests);
	if (!o->nchunks) {
		o->nchunks = BL_ARRAY_SIZE(matrix_chunks);
		memcpy(o->chunks, matrix_chunks, sizeof(matrix_chunks));
	}
	if (!o->loop_mask)
		o->loop_mask = (1u << FZ_NR_LOOPS) - 1;
	for (ch = 0; ch < FZ_NR_LOOPS; ch++) {
		const char *why;

		if ((o->loop_mask & (1u << ch)) && !loop_runs(ch, &why)) {
			if (o->narrowed)
				fprintf(stderr, "clearbench: %s left out: %s\n",
					loop_names[ch], why);
			o->loop_mask &= ~(1u << ch);
		}
	}
	if (!o->loop_mask)
		bl_die("no loop of --loops runs on this CPU");
}

static size_t largest(const struct opts *o)
{
	size_t m = 64u << 10;
	int i;

	for (i = 0; i < o->nbufs; i++)
		m = BL_MAX(m, o->bufs[i]);
	for (i = 0; i < o->ndests; i++)
		m = BL_MAX(m, o->dests[i]);
	if (strstr(o->sections, "calibrate"))
		m = BL_MAX(m, cal_max(o));
	if (strstr(o->sections, "fault"))
		m = BL_MAX(m, (size_t)1 << 30);
	if (strstr(o->sections, "stores"))
		m = BL_MAX(m, (size_t)STORES_COLD);
	return m;
}

static void header(const struct opts *o, struct bl_report *rep)
{
	bl_note(rep, "cpu", "%s", bl_cpu_model());
	bl_note(rep, "cpu_flags", "%s", bl_cpu_flags());
	bl_note(rep, "pinned_cpu", "%d", o->cpu);
	bl_note(rep, "thp", "%s", o->thp ? "madvise(MADV_HUGEPAGE)" : "off (MADV_NOHUGEPAGE)");
	bl_note(rep, "reps", "%u interleaved, ~%.0f ms per sample", o->reps, o->target_ms);
#ifdef __x86_64__
	bl_note(rep, "fz_erms_threshold", "%lu", fz_erms_threshold);
#endif
	bl_note(rep, "spread", "(max - min) / median of the repetitions");
}

int main(int argc, char **argv)
{
	struct bl_report rep = { .tool = "clearbench" };
	struct opts o;
	size_t size;
	char *buf;
	uint64_t t0 = bl_now_ns();

	parse_opts(argc, argv, &o);
	rep.mode = o.mode;
	if (bl_pin_cpu(o.cpu))
		perror("sched_setaffinity");
	size = largest(&o);
	buf = bl_alloc(size, o.thp);
	self_test(buf);
	header(&o, &rep);
	if (strstr(o.sections, "matrix"))
		section_matrix(&o, &rep, buf);
	if (strstr(o.sections, "short"))
		section_short(&o, &rep, buf);
	if (strstr(o.sections, "chunk"))
		section_chunk(&o, &rep, buf);
	if (strstr(o.sections, "fault"))
		section_fault(&o, &rep, buf);
	if (strstr(o.sections, "stores"))
		section_stores(&o, &rep, buf);
	if (strstr(o.sections, "calibrate"))
		section_calibrate(&o, &rep, buf);
	bl_note(&rep, "runtime_s", "%.1f", (bl_now_ns() - t0) / 1e9);

	bl_print_table(o.json ? stderr : stdout, &rep);
	if (o.json)
		bl_write_json(stdout, &rep);
	if (o.csv && bl_write_csv(o.csv, &rep))
		bl_die("writing %s failed", o.csv);
	bl_free(buf, size);
	bl_report_free(&rep);
	return 0;
}
