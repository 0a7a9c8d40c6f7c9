// SPDX-License-Identifier: GPL-2.0
/* benchlib.c - shared helpers of clearbench and fzbench. */
#define _GNU_SOURCE
#include "benchlib.h"
#include "fzcpu.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

uint64_t bl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bl_stats(const double *v, unsigned int n, struct bl_stats *st)
{
	double s[BL_MAX_REPS];

	memset(st, 0, sizeof(*st));
	n = BL_MIN(n, BL_MAX_REPS);
	if (!n)
		return;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	st->n = n;
	st->min = s[0];
	st->max = s[n - 1];
	st->med = n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	st->spread_pct = st->med > 0 ? 100 * (st->max - st->min) / st->med : 0;
}

int bl_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10; end++; break;
	case 'm': case 'M':
		v <<= 20; end++; break;
	case 'g': case 'G':
		v <<= 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')	/* accept "KiB", "MB" spellings */
		end += strspn(end, "iB");
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int bl_parse_size_list(const char *s, size_t *out, int max)
{
	char tmp[256], *tok, *save;
	int n = 0;

	if (strlen(s) >= sizeof(tmp))
		return -1;
	strcpy(tmp, s);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || bl_parse_size(tok, &out[n]))
			return -1;
		n++;
	}
	return n;
}

const char *bl_fmt_size(size_t v, char *buf, size_t len)
{
	static const char units[] = "KMG";
	int u = -1;

	while (v >= 1024 && !(v & 1023) && u < 2) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%zu", v);
	else
		snprintf(buf, len, "%zu%c", v, units[u]);
	return buf;
}

void bl_prefault(void *p, size_t len)
{
	volatile char *c = p;
	size_t i;

	for (i = 0; i < len; i += 4096)
		c[i] = 1;
	if (len)
		c[len - 1] = 1;
}

void *bl_alloc(size_t len, bool thp)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bl_die("mmap %zu bytes: %s", len, strerror(errno));
	/* Explicit either way, so results don't depend on the THP default. */
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	bl_prefault(p, len);
	return p;
}

void bl_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int bl_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

const char *bl_cpu_model(void)
{
	static char model[128];

	return fz_cpuinfo_field("model name", model, sizeof(model));
}

const char *bl_cpu_flags(void)
{
#if defined(__x86_64__)
	static const char * const want[] = {
		"erms", "fsrm", "fzrm", "fsrs", "fsrc", "rep_good",
		"avx512f", "clzero", "movdir64b", "hypervisor",
	};
	static const char key[] = "flags";
#else
	static const char * const want[] = { "mops", "mte", "bti", "sve" };
	static const char key[] = "Features";
#endif
	static char out[160];
	char flags[4096], padded[4100], pat[32];
	size_t i, o = 0;

	fz_cpuinfo_field(key, flags, sizeof(flags));
	/* space-separated list: pad both ends so " flag " matches anywhere */
	snprintf(padded, sizeof(padded), " %s ", flags);
	out[0] = 0;
	for (i = 0; i < BL_ARRAY_SIZE(want); i++) {
		snprintf(pat, sizeof(pat), " %s ", want[i]);
		if (strstr(padded, pat))
			o += snprintf(out + o, sizeof(out) - o, "%s%s",
				      o ? " " : "", want[i]);
	}
	return o ? out : "none";
}

bool bl_cpu_has_movdir64b(void)
{
#if defined(__x86_64__)
	unsigned int r[4];

	if (__get_cpuid_max(0, NULL) < 7)
		return false;
	fz_user_cpuid(7, 0, r);
	return r[2] & (1u << 28);
#else
	return false;
#endif
}

void bl_fz_cpu(struct fz_cpu *cpu)
{
	fz_read_cpu(cpu);
}

static void *grow(void *arr, unsigned int *cap, size_t elem)
{
	unsigned int ncap = *cap ? *cap * 2 : 64;
	void *p = realloc(arr, ncap * elem);

	if (!p)
		bl_die("out of memory");
	*cap = ncap;
	return p;
}

struct bl_result *bl_add(struct bl_report *rep, const char *workload,
			 const char *param, const char *series,
			 const char *unit, const double *samples,
			 unsigned int n)
{
	struct bl_result *r;

	if (rep->nres == rep->capres)
		rep->res = grow(rep->res, &rep->capres, sizeof(*r));
	r = &rep->res[rep->nres++];
	memset(r, 0, sizeof(*r));
	snprintf(r->workload, sizeof(r->workload), "%s", workload);
	snprintf(r->param, sizeof(r->param), "%s", param);
	snprintf(r->series, sizeof(r->series), "%s", series);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	bl_stats(samples, n, &r->st);
	r->ratio = NAN;
	r->ratio_spread_pct = NAN;
	r->aux = NAN;
	return r;
}

void bl_set_ratio(struct bl_result *r, const struct bl_result *base)
{
	if (!base || !base->st.n || !r->st.n || base->st.med <= 0)
		return;
	r->ratio = r->st.med / base->st.med;
	r->ratio_spread_pct = r == base ? NAN : r->st.spread_pct + base->st.spread_pct;
}

bool bl_ratio_noise(const struct bl_result *r)
{
	return !isnan(r->ratio_spread_pct) &&
	       r->ratio_spread_pct > 100 * fabs(r->ratio - 1);
}

struct bl_result *bl_find(const struct bl_report *rep, const char *workload,
			  const char *param, const char *series)
{
	unsigned int i;

	for (i = 0; i < rep->nres; i++) {
		struct bl_result *r = &rep->res[i];

		if (!strcmp(r->workload, workload) && !strcmp(r->param, param) &&
		    !strcmp(r->series, series))
			return r;
	}
	return NULL;
}

void bl_note(struct bl_report *rep, const char *key, const char *fmt, ...)
{
	struct bl_note *n;
	va_list ap;

	if (rep->nnotes == rep->capnotes)
		rep->notes = grow(rep->notes, &rep->capnotes, sizeof(*n));
	n = &rep->notes[rep->nnotes++];
	snprintf(n->key, sizeof(n->key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(n->val, sizeof(n->val), fmt, ap);
	va_end(ap);
}

void bl_report_free(struct bl_report *rep)
{
	free(rep->res);
	free(rep->notes);
	rep->res = NULL;
	rep->notes = NULL;
	rep->nres = rep->nnotes = 0;
}

static void fmt_num(char *buf, size_t len, double v, const char *fmt)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, fmt, v);
}

void bl_print_table(FILE *f, const struct bl_report *rep)
{
	unsigned int i;

	fprintf(f, "# %s, mode: %s\n", rep->tool, rep->mode);
	for (i = 0; i < rep->nnotes; i++)
		if (strncmp(rep->notes[i].key, "result.", 7))
			fprintf(f, "# %s: %s\n", rep->notes[i].key, rep->notes[i].val);
	fprintf(f, "%-16s %-10s %-16s %10s %8s %7s %8s %14s\n", "workload", "param",
		"series", "median", "spread", "ratio", "spread", "aux");
	for (i = 0; i < rep->nres; i++) {
		const struct bl_result *r = &rep->res[i];
		char med[32], spr[16], rat[16], rspr[16], aux[40];

		if (!r->st.n) {
			snprintf(med, sizeof(med), "n/a");
			snprintf(spr, sizeof(spr), "-");
		} else {
			snprintf(med, sizeof(med), "%.3f %s", r->st.med, r->unit);
			snprintf(spr, sizeof(spr), "%.1f%%", r->st.spread_pct);
		}
		fmt_num(rat, sizeof(rat), r->ratio,
			bl_ratio_noise(r) ? "%.2fx?" : "%.2fx");
		fmt_num(rspr, sizeof(rspr), r->ratio_spread_pct, "%.1f%%");
		if (isnan(r->ratio_spread_pct))
			snprintf(rspr, sizeof(rspr), "-");
		aux[0] = 0;
		if (r->aux_name[0] && !isnan(r->aux))
			snprintf(aux, sizeof(aux), "%s=%.4g", r->aux_name, r->aux);
		fprintf(f, "%-16s %-10s %-16s %15s %8s %7s %8s %s\n", r->workload,
			r->param, r->series, med, spr, rat, rspr, aux);
	}
	fputs("# ratio: to the row group's baseline (1.00x); its spread: both spreads added; "
	      "?: the spread exceeds the effect |ratio - 1|, noise\n", f);
	for (i = 0; i < rep->nnotes; i++)
		if (!strncmp(rep->notes[i].key, "result.", 7))
			fprintf(f, "=> %s: %s\n", rep->notes[i].key + 7,
				rep->notes[i].val);
}

int bl_write_csv(const char *path, const struct bl_report *rep)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	unsigned int i;

	if (!f)
		return -1;
	fprintf(f, "tool,mode,workload,param,series,unit,median,min,max,spread_pct,n,ratio,aux_name,aux,"
		"ratio_spread_pct,noise\n");
	for (i = 0; i < rep->nres; i++) {
		const struct bl_result *r = &rep->res[i];
		char rat[32], aux[32], rspr[32];

		fmt_num(rat, sizeof(rat), r->ratio, "%.4f");
		fmt_num(aux, sizeof(aux), r->aux, "%.6g");
		fmt_num(rspr, sizeof(rspr), r->ratio_spread_pct, "%.2f");
		if (!r->st.n)
			fprintf(f, "%s,%s,%s,%s,%s,%s,n/a,n/a,n/a,n/a,0,n/a,%s,%s,n/a,\n",
				rep->tool, rep->mode, r->workload, r->param,
				r->series, r->unit, r->aux_name, aux);
		else
			fprintf(f, "%s,%s,%s,%s,%s,%s,%.4f,%.4f,%.4f,%.2f,%u,%s,%s,%s,%s,%s\n",
				rep->tool, rep->mode, r->workload, r->param,
				r->series, r->unit, r->st.med, r->st.min,
				r->st.max, r->st.spread_pct, r->st.n, rat,
				r->aux_name, aux, rspr,
				isnan(r->ratio_spread_pct) ? "" : bl_ratio_noise(r) ? "1" : "0");
	}
	if (f != stdout)
		return fclose(f);
	return fflush(f);
}

/* Our strings are plain ASCII names; escape what JSON requires anyway. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void json_result(FILE *f, const struct bl_result *r)
{
	fputs("{\"workload\": ", f);
	json_str(f, r->workload);
	fputs(", \"param\": ", f);
	json_str(f, r->param);
	fputs(", \"series\": ", f);
	json_str(f, r->series);
	fputs(", \"unit\": ", f);
	json_str(f, r->unit);
	fprintf(f, ", \"n\": %u, \"median\": ", r->st.n);
	json_num(f, r->st.n ? r->st.med : NAN);
	fputs(", \"min\": ", f);
	json_num(f, r->st.n ? r->st.min : NAN);
	fputs(", \"max\": ", f);
	json_num(f, r->st.n ? r->st.max : NAN);
	fputs(", \"spread_pct\": ", f);
	json_num(f, r->st.n ? r->st.spread_pct : NAN);
	fputs(", \"ratio\": ", f);
	json_num(f, r->ratio);
	if (r->aux_name[0]) {
		fputs(", ", f);
		json_str(f, r->aux_name);
		fputs(": ", f);
		json_num(f, r->aux);
	}
	fputc('}', f);
}

void bl_write_json(FILE *f, const struct bl_report *rep)
{
	unsigned int i;

	fputs("{\n  \"tool\": ", f);
	json_str(f, rep->tool);
	fputs(",\n  \"mode\": ", f);
	json_str(f, rep->mode);
	fputs(",\n  \"notes\": {", f);
	for (i = 0; i < rep->nnotes; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_str(f, rep->notes[i].key);
		fputs(": ", f);
		json_str(f, rep->notes[i].val);
	}
	fputs("\n  },\n  \"results\": [", f);
	for (i = 0; i < rep->nres; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_result(f, &rep->res[i]);
	}
	fputs("\n  ]\n}\n", f);
	fflush(f);
}

void bl_progress(unsigned int i, unsigned int n, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[%u/%u] ", i, n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void bl_die(const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

unsigned long bl_calibrate(uint64_t (*time)(void *arg, unsigned long n),
			   void *arg, double target_ns, unsigned long max)
{
	unsigned long n = 1;
	uint64_t t;

	for (;;) {
		t = time(arg, n);
		if (t >= target_ns / 8 || n >= max)
			break;
		n *= 8;
	}
	return BL_MAX(1ul, (unsigned long)(n * target_ns / t));
}
