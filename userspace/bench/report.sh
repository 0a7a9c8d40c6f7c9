#!/usr/bin/env bash
# report.sh - turn collect.sh's raw outputs into one table, a CSV and a plot.
#
# usage: report.sh RAWDIR OUTBASE
#   RAWDIR   what collect.sh wrote (meta.txt, dd.raw, fio-*.json, fzbench.csv,
#            with collect.sh -u also fzbench-unrolled.csv)
#   OUTBASE  path without extension: writes OUTBASE.csv, OUTBASE.dat,
#            OUTBASE.svg and OUTBASE.png; the table goes to stdout
# One row per workload and block size: reference GB/s, device GB/s, ratio
# (device / reference) and both spreads ((max - min) / median, in percent).
#
# CSV columns (one line per tool, workload, param):
#   mode,tool,workload,param,ref,ref_gbs,ref_spread_pct,dev,dev_gbs,
#   dev_spread_pct,ratio,anon_gbs,aux,
#   unrolled_gbs,unrolled_spread_pct,unrolled_ratio,unrolled_ref_gbs
# The last four are the third series, "fastzero-unrolled" (collect.sh -u,
# role U): dev read with fastzero's force_variant=unrolled, the same movq
# loop as /dev/zero, so unrolled_ratio compares only fastzero's chunking and
# read path with /dev/zero's.  unrolled_ratio = unrolled_gbs /
# unrolled_ref_gbs, the ref median interleaved with those samples: ref_gbs
# for dd and fio (three series in one rotation), fzbench's second pass
# (read and readv with force_variant=unrolled, dev vs ref) for fzbench.
# They are empty where the series did not run (not asked, no writable
# parameter, or a workload it skips: fio other than seq-read-bs, splice,
# mmap), "n/a" where it failed.  dev_gbs is measured with force_variant=auto.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

need() {	# need CMD PKG: install PKG if CMD is missing (FZ_NO_INSTALL=1: fail)
	command -v "$1" >/dev/null 2>&1 && return 0
	[[ ${FZ_NO_INSTALL:-0} != 1 ]] || return 1
	dpkg -s "$2" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
}

meta() { sed -n "s/^$1=//p" "$RAW/meta.txt" | head -n1; }

# dd.raw "dd BS ROLE DEV REP BYTES SECS GBPS" -> "dd read BS ROLE GBPS"
dd_samples() {
	[[ -s $RAW/dd.raw ]] || return 0
	awk '$1 == "dd" { print "dd", "read", $2, $3, $8 }' "$RAW/dd.raw"
}

# fio-NAME-ROLE-REP.json -> "fio NAME JOB ROLE GBPS" (n/a when the job failed)
fio_samples() {
	local f base name role
	for f in "$RAW"/fio-*.json; do
		[[ -e $f ]] || continue
		base=$(basename "$f" .json)
		role=${base%-*}
		role=${role##*-}
		name=${base#fio-}
		name=${name%-*-*}
		# fio prints error lines before the JSON document on stdout
		sed -n '/^{/,$p' "$f" | jq -r --arg n "$name" --arg r "$role" \
			'.jobs[] | "fio \($n) \(.jobname) \($r) " +
			 (if .error == 0 then (.read.bw_bytes / 1e9 | tostring) else "n/a" end)' \
			2>/dev/null || echo "fio $name parse-error $role n/a"
	done
}

# samples -> "tool workload param role median spread n" (first-seen order)
stats() {
	awk '
		function med(k,   n, i, j, t, v) {
			n = cnt[k]
			for (i = 1; i <= n; i++)
				v[i] = val[k, i]
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
				}
			m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			# one sample has no spread
			return sprintf("%.4f %s %d", m, n < 2 ? "n/a" : sprintf("%.1f", m > 0 ? 100 * (v[n] - v[1]) / m : 0), n)
		}
		{
			k = $1 " " $2 " " $3 " " $4
			if (!(k in seen)) { seen[k] = 1; order[++nk] = k; cnt[k] = 0 }
			if ($5 != "n/a") val[k, ++cnt[k]] = $5
		}
		END {
			for (i = 1; i <= nk; i++)
				print order[i], cnt[order[i]] ? med(order[i]) : "n/a n/a 0"
		}'
}

# fzbench.csv -> "fzbench workload param role median spread n aux";
# fzbench-unrolled.csv: dev -> role U, its ref -> role UREF
fz_rows() {
	local f files=() u=$RAW/fzbench-unrolled.csv
	for f in "$RAW/fzbench.csv" "$u"; do
		[[ ! -s $f ]] || files+=("$f")
	done
	((${#files[@]})) || return 0
	awk -F, -v dev="$(meta dev)" -v ufile="$u" 'FNR > 1 {
		if (FILENAME == ufile)
			role = $5 == dev ? "U" : "UREF"
		else
			role = $5 == dev ? "A" : $5 == "anon" ? "anon" : "B"
		aux = $14 == "n/a" || $13 == "" ? "" : $13 "=" $14
		print "fzbench", $3, $4, role, $7, $10, $11, aux
	}' "${files[@]}"
}

# rows -> wide CSV: one line per (tool, workload, param)
pivot() {
	awk -v mode="$(meta mode)" -v dev="$(meta dev)" -v ref="$(meta ref)" '
		{
			k = $1 "," $2 "," $3
			if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
			m[k, $4] = $5; s[k, $4] = $6; has[k, $4] = 1
			if ($8 != "") aux[k] = aux[k] (aux[k] == "" ? "" : " ") $4 ":" $8
		}
		END {
			print "mode,tool,workload,param,ref,ref_gbs,ref_spread_pct,dev,dev_gbs,dev_spread_pct,ratio,anon_gbs,aux," \
				"unrolled_gbs,unrolled_spread_pct,unrolled_ratio,unrolled_ref_gbs"
			for (i = 1; i <= nk; i++) {
				k = order[i]
				a = m[k, "A"]; b = m[k, "B"]
				r = (a + 0 > 0 && b + 0 > 0) ? sprintf("%.3f", a / b) : "n/a"
				printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,", mode, k, ref,
					b == "" ? "n/a" : b, s[k, "B"] == "" ? "n/a" : s[k, "B"],
					dev, a == "" ? "n/a" : a, s[k, "A"] == "" ? "n/a" : s[k, "A"],
					r, (m[k, "anon"] == "" ? "" : m[k, "anon"]) "," aux[k]
				if (!has[k, "U"]) {
					print ",,,"
					continue
				}
				u = m[k, "U"]; ub = has[k, "UREF"] ? m[k, "UREF"] : b
				printf "%s,%s,%s,%s\n", u, s[k, "U"],
					(u + 0 > 0 && ub + 0 > 0) ? sprintf("%.3f", u / ub) : "n/a",
					ub == "" ? "n/a" : ub
			}
		}'
}

# the table; with any unrolled_gbs, three more columns: unrl GB/s, its spread,
# u.ratio (and a note where u.ratio's ref is not the ref GB/s column's)
table() {
	awk -F, '
		function num(v, f) { return v == "n/a" || v == "" ? v : sprintf(f, v) }
		function pct(v) { return v == "n/a" ? "-" : v == "" ? "" : sprintf("%.1f%%", v) }
		NR == FNR {
			if (FNR > 1 && $14 != "") unrl = 1
			next
		}
		FNR == 1 {
			printf "%-8s %-14s %-14s %11s %8s %11s %8s %7s", "tool", "workload",
				"param", "ref GB/s", "spread", "dev GB/s", "spread", "ratio"
			if (unrl)
				printf " %10s %8s %7s", "unrl GB/s", "spread", "u.ratio"
			printf "  %s\n", "notes"
			next
		}
		{
			note = ($12 != "" ? sprintf("anon %.2f GB/s ", $12) : "") $13
			printf "%-8s %-14s %-14s %11s %8s %11s %8s %7s", $2, $3, $4,
				num($6, "%.2f"), pct($7), num($9, "%.2f"), pct($10), $11
			if (unrl) {
				printf " %10s %8s %7s", num($14, "%.2f"), pct($15), $16
				if ($17 != "" && $17 != $6)
					note = note (note == "" ? "" : " ") "u.ratio ref " num($17, "%.2f") " (own pass)"
			}
			printf "  %s\n", note
		}' "$1" "$1"
}

# plot data: block size in bytes, ref, dev, unrolled (nan if none) for
# fzbench read, dd, fio psync
plot_data() {
	awk -F, '
		function bytes(p,   n, u) {
			sub(/^bs-/, "", p)
			n = p + 0; u = toupper(substr(p, length(p)))
			return u == "K" ? n * 1024 : u == "M" ? n * 1048576 : u == "G" ? n * 1073741824 : n
		}
		NR > 1 && $6 != "n/a" && $9 != "n/a" {
			line = bytes($4) " " $6 " " $9 " " ($14 == "" || $14 == "n/a" ? "nan" : $14) "\n"
			if ($2 == "fzbench" && $3 == "read") blk[0] = blk[0] line
			if ($2 == "dd") blk[1] = blk[1] line
			if ($2 == "fio" && $3 == "seq-read-bs") blk[2] = blk[2] line
		}
		END {
			for (i = 0; i < 3; i++)
				printf "# block %d\n%s%s\n\n", i, blk[i] == "" ? "nan nan nan nan\n" : blk[i], ""
		}' "$1"
}

main() {
	[[ $# -eq 2 && -f $1/meta.txt ]] || { sed -n '4,9p' "$0" >&2; exit 2; }
	RAW=$1
	local out=$2 mode unrl v
	mode=$(meta mode)
	need jq jq || { echo "report.sh: jq is missing (apt install jq)" >&2; exit 1; }
	mkdir -p "$(dirname "$out")"
	{ dd_samples; fio_samples; } | stats | awk '{ print $0, "" }' >"$out.rows"
	fz_rows >>"$out.rows"
	pivot <"$out.rows" >"$out.csv"
	rm -f "$out.rows"
	echo "# mode: $mode   kernel: $(meta kernel)   ref: $(meta ref)   dev: $(meta dev)   ratio = dev / ref"
	unrl=$(awk -F, 'NR > 1 && $14 != "" { print 1; exit }' "$out.csv")
	if [[ $unrl == 1 ]]; then
		v=$(meta clear_user_variant)
		echo "# unrl = $(meta dev) with force_variant=unrolled (/dev/zero's movq loop; dev GB/s is" \
			"auto${v:+: $v}), u.ratio = unrl / ref interleaved with it"
	elif [[ $(meta unrolled) == 0\ \(*\) && $(meta unrolled) != *'not asked'* ]]; then
		echo "# no force_variant=unrolled series: $(meta unrolled | sed 's/^0 (//; s/)$//')"
	fi
	table "$out.csv"
	plot_data "$out.csv" >"$out.dat"
	if ! need gnuplot gnuplot-nox; then
		echo "warning: no gnuplot (apt install gnuplot-nox): no plot" >&2
		echo "# csv: $out.csv"
		return 0
	fi
	gnuplot -e "datafile='$out.dat'; outbase='$out'; refname='$(meta ref)'; devname='$(meta dev)'; hasunrolled=${unrl:-0}; plottitle='read throughput, $(meta kernel), mode $mode'" \
		"$BENCH_DIR/plot.gp" 2>"$out.gnuplot.err" || echo "warning: gnuplot failed, see $out.gnuplot.err" >&2
	[[ -s $out.gnuplot.err ]] || rm -f "$out.gnuplot.err"
	echo "# csv: $out.csv   plot: $out.svg $out.png"
}

main "$@"
