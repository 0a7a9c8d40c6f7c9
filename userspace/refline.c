// SPDX-License-Identifier: GPL-2.0
/*
 * refline - a model of the lent zero page's reference count cache line.
 *
 * Each 4 KiB buffer splice_read() lends costs the page's reference count
 * two atomic read-modify-writes on one cache line: splice.c takes the
 * references of a batch of PIPE_DEF_BUFFERS (16) with one page_ref_add()
 * (a lock add), and the consumer drops each with put_page() (a lock dec
 * that tests for zero).  This program runs exactly that on this CPU, in
 * userspace, with the same x86 instructions: N threads, each pinned to
 * CPU i % ncpu, each doing "add 16, then 16 times dec-and-test":
 *
 *   shared    every thread on one line: the page every CPU lent before
 *             (one page for the whole system)
 *   per-cpu   each thread on its own line: the per-CPU pages of splice.c
 *
 * and prints ns per buffer per thread, the total rate, and shared/per-cpu.
 * Mode: native userspace, host CPU.  It models the cache line only, not
 * the splice around it (syscall, pipe locking, the consumer's own work).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib.h"

#define BATCH		16	/* PIPE_DEF_BUFFERS: one page_ref_add() per batch */
#define LINE		64
#define MAX_THREADS	256

struct line {
	int count;
	char pad[LINE - sizeof(int)];
} __attribute__((aligned(LINE)));

static struct line lines[MAX_THREADS];
static unsigned long batches = 200000;
static pthread_barrier_t start;

struct worker {
	pthread_t tid;
	int cpu;
	struct line *l;
	uint64_t ns;
	unsigned long zeros;	/* keeps the dec-and-test result live */
};

/* page_ref_add(page, 16); then put_page() x 16 (atomic_dec_and_test()). */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i, zeros = 0;
	uint64_t t0;
	int j;

	bl_pin_cpu(w->cpu);
	pthread_barrier_wait(&start);
	t0 = bl_now_ns();
	for (i = 0; i < batches; i++) {
		__atomic_fetch_add(&w->l->count, BATCH, __ATOMIC_RELAXED);
		for (j = 0; j < BATCH; j++)
			zeros += __atomic_sub_fetch(&w->l->count, 1,
						    __ATOMIC_ACQ_REL) == 0;
	}
	w->ns = bl_now_ns() - t0;
	w->zeros = zeros;
	return NULL;
}

/* ns per buffer per thread (the slowest thread), best of @reps. */
static double run(int threads, int shared, int ncpu, unsigned int reps)
{
	static struct worker w[MAX_THREADS];
	double best = 0, ns;
	uint64_t worst;
	unsigned int r;
	int i;

	for (r = 0; r < reps; r++) {
		pthread_barrier_init(&start, NULL, threads);
		for (i = 0; i < threads; i++) {
			lines[i].count = 1;	/* the module's own reference */
			w[i].cpu = i % ncpu;
			w[i].l = shared ? &lines[0] : &lines[i];
			if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
				bl_die("pthread_create");
		}
		worst = 0;
		for (i = 0; i < threads; i++) {
			pthread_join(w[i].tid, NULL);
			if (w[i].ns > worst)
				worst = w[i].ns;
		}
		pthread_barrier_destroy(&start);
		ns = (double)worst / ((double)batches * BATCH);
		if (!r || ns < best)
			best = ns;
	}
	return best;
}

static void usage(const char *prog)
{
	printf("usage: %s [--threads N,...] [--batches N] [--reps N] [--quick]\n"
	       "  N threads (default 1, 2, ... up to twice the CPUs) doing the lent page's\n"
	       "  reference count traffic on one shared line and on per-thread lines\n",
	       prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "batches", required_argument, NULL, 'b' },
		{ "reps", required_argument, NULL, 'r' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), list[32], n = 0, i, c;
	unsigned int reps = 5;
	double one = 0;

	while ((c = getopt_long(argc, argv, "t:b:r:qh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			for (char *s = strtok(optarg, ","); s && n < 32; s = strtok(NULL, ","))
				list[n++] = atoi(s);
			break;
		case 'b':
			batches = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			reps = (unsigned int)atoi(optarg);
			break;
		case 'q':
			batches = 20000;
			reps = 3;
			break;
		default:
			usage(argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (!n)
		for (i = 1; i <= 2 * ncpu && n < 32; i *= 2)
			list[n++] = i;
	printf("# refline: MODEL of the lent page's refcount line, mode: native userspace, host CPU (%s; %d CPUs)\n",
	       bl_cpu_model(), ncpu);
	printf("# per 4 KiB buffer: 1/%d lock add (page_ref_add of a batch) + 1 lock dec-and-test (put_page); best of %u, %lu batches per thread\n",
	       BATCH, reps, batches);
	printf("threads  shared-ns  percpu-ns  shared-Mbuf/s  percpu-Mbuf/s  shared/percpu\n");
	for (i = 0; i < n; i++) {
		int t = list[i] < 1 ? 1 : list[i] > MAX_THREADS ? MAX_THREADS : list[i];
		double s = run(t, 1, ncpu, reps), p = run(t, 0, ncpu, reps);

		if (!one)
			one = p;
		printf("%7d  %9.2f  %9.2f  %13.1f  %13.1f  %12.2fx\n", t, s, p,
		       t / s * 1e3, t / p * 1e3, s / p);
	}
	printf("# threads beyond the CPUs share them: ns per buffer then includes waiting for a CPU\n");
	return 0;
}
