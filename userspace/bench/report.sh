#!/usr/bin/env bash
# report.sh - turn collect.sh's raw outputs into one table, a CSV and a plot.
#
# usage: report.sh RAWDIR OUTBASE
#   RAWDIR   what collect.sh wrote (meta.txt, dd.raw, fio-*.json, fzbench.csv,
#            clients.raw, with collect.sh -u also fzbench-unrolled.csv)
#   OUTBASE  path without extension: writes OUTBASE.csv, OUTBASE.dat,
#            OUTBASE.svg and OUTBASE.png; the table goes to stdout
# One row per workload and block size: reference GB/s, device GB/s, ratio
# (device / reference) and the spreads ((max - min) / median, in percent).
# A ratio's spread is its two series' spreads added (the most its range can
# be, to first order); a ratio whose spread exceeds its effect (|ratio - 1|,
# in percent) is marked "?" in the table and "1" in the CSV's noise column:
# noise, not a result.
#
# CSV columns (one line per tool, workload, param):
#   mode,tool,workload,param,ref,ref_gbs,ref_spread_pct,dev,dev_gbs,
#   dev_spread_pct,ratio,anon_gbs,aux,
#   unrolled_gbs,unrolled_spread_pct,unrolled_ratio,unrolled_ref_gbs,
#   ratio_spread_pct,unrolled_ratio_spread_pct,figure,figure_of,
#   figure_spread_pct,noise
# unrolled_* are the third series, "fastzero-unrolled" (collect.sh -u,
# role U): dev read with fastzero's force_variant=unrolled, the same movq
# loop as /dev/zero, so unrolled_ratio compares only fastzero's chunking and
# read path with /dev/zero's.  unrolled_ratio = unrolled_gbs /
# unrolled_ref_gbs, the ref median interleaved with those samples: ref_gbs
# for dd, fio and the clients (three series in one rotation), fzbench's
# second pass (force_variant=unrolled, dev vs ref) for fzbench.  They are
# empty where the series did not run (not asked, no writable parameter, or
# fzbench's mmap workloads, which run no read loop), "n/a" where it failed.
# dev_gbs is measured with force_variant=auto.  figure is the ratio a reader
# compares: unrolled_ratio where there is one, else ratio (figure_of says
# which); noise is 1 when figure_spread_pct exceeds |figure - 1| in percent.
# aux: per series, in the columns' order (ref, dev, anon = MAP_ANONYMOUS):
# page faults (minflt) or page tables (vmpte_kB).
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

# clients.raw "client WL SINK ROLE REP BYTES SECS GBPS" -> "client WL SINK ROLE GBPS"
client_samples() {
	[[ -s $RAW/clients.raw ]] || return 0
	awk '$1 == "client" { print "client", $2, $3, $4, $8 }' "$RAW/clients.raw"
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
		function pos(v) { return v != "" && v != "n/a" && v + 0 > 0 }
		function rat(a, b) { return pos(a) && pos(b) ? sprintf("%.3f", a / b) : "n/a" }
		# the spread of a ratio: the spreads of its two series added
		function rspr(sa, sb) { return sa != "" && sa != "n/a" && sb != "" && sb != "n/a" ? sprintf("%.1f", sa + sb) : "n/a" }
		function noise(r, sp,   e) {
			if (r == "n/a" || sp == "n/a") return ""
			e = 100 * (r - 1); if (e < 0) e = -e
			return sp + 0 > e ? 1 : 0
		}
		{
			k = $1 "," $2 "," $3
			if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
			m[k, $4] = $5; s[k, $4] = $6; has[k, $4] = 1
			if ($8 != "") aux[k, $4] = $8
		}
		END {
			print "mode,tool,workload,param,ref,ref_gbs,ref_spread_pct,dev,dev_gbs,dev_spread_pct,ratio,anon_gbs,aux," \
				"unrolled_gbs,unrolled_spread_pct,unrolled_ratio,unrolled_ref_gbs," \
				"ratio_spread_pct,unrolled_ratio_spread_pct,figure,figure_of,figure_spread_pct,noise"
			for (i = 1; i <= nk; i++) {
				k = order[i]
				a = m[k, "A"]; b = m[k, "B"]
				r = rat(a, b); rs = rspr(s[k, "A"], s[k, "B"])
				notes = ""
				# the series in the columns order: ref, dev, then anon
				if ((k, "B") in aux) notes = "ref:" aux[k, "B"]
				if ((k, "A") in aux) notes = notes (notes == "" ? "" : " ") "dev:" aux[k, "A"]
				if ((k, "anon") in aux) notes = notes (notes == "" ? "" : " ") "anon:" aux[k, "anon"]
				printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,", mode, k, ref,
					b == "" ? "n/a" : b, s[k, "B"] == "" ? "n/a" : s[k, "B"],
					dev, a == "" ? "n/a" : a, s[k, "A"] == "" ? "n/a" : s[k, "A"],
					r, (m[k, "anon"] == "" ? "" : m[k, "anon"]) "," notes
				fig = r; figof = "ratio"; fs = rs; us = ""
				if (!has[k, "U"]) {
					printf ",,,,"
				} else {
					u = m[k, "U"]
					if (has[k, "UREF"]) { ub = m[k, "UREF"]; ubs = s[k, "UREF"] } else { ub = b; ubs = s[k, "B"] }
					ur = rat(u, ub); us = rspr(s[k, "U"], ubs)
					printf "%s,%s,%s,%s,", u, s[k, "U"], ur, ub == "" ? "n/a" : ub
					fig = ur; figof = "unrolled_ratio"; fs = us
				}
				printf "%s,%s,%s,%s,%s,%s\n", rs, us, fig, figof, fs, noise(fig, fs)
			}
		}'
}

# the table; with any unrolled_gbs, three more columns: unrl GB/s, its
# spread, u.ratio (and a note where u.ratio's ref is not the ref GB/s
# column's); every ratio with its spread, "?" where that exceeds its effect
table() {
	awk -F, '
		function num(v, f) { return v == "n/a" || v == "" ? v : sprintf(f, v) }
		function pct(v) { return v == "n/a" ? "-" : v == "" ? "" : sprintf("%.1f%%", v) }
		function mark(r, sp,   e) {
			if (r == "n/a" || r == "" || sp == "n/a" || sp == "") return r
			e = 100 * (r - 1); if (e < 0) e = -e
			return r (sp + 0 > e ? "?" : "")
		}
		NR == FNR {
			if (FNR > 1 && $14 != "") unrl = 1
			next
		}
		FNR == 1 {
			printf "%-8s %-13s %-14s %9s %7s %9s %7s %8s %7s", "tool", "workload",
				"param", "ref GB/s", "spread", "dev GB/s", "spread", "ratio", "spread"
			if (unrl)
				printf " %9s %7s %8s %7s", "unrl GB/s", "spread", "u.ratio", "spread"
			printf "  %s\n", "notes"
			next
		}
		{
			note = ($12 != "" ? sprintf("anon %.2f GB/s ", $12) : "") $13
			printf "%-8s %-13s %-14s %9s %7s %9s %7s %8s %7s", $2, $3, $4,
				num($6, "%.2f"), pct($7), num($9, "%.2f"), pct($10), mark($11, $18), pct($18)
			if (unrl) {
				if ($14 == "")	# no read loop on this path: the ratio is the figure
					printf " %9s %7s %8s %7s", "", "", "=ratio", ""
				else
					printf " %9s %7s %8s %7s", num($14, "%.2f"), pct($15), mark($16, $19), pct($19)
				if ($17 != "" && $17 != $6)
					note = note (note == "" ? "" : " ") "u.ratio ref " num($17, "%.2f") " (own pass)"
			}
			printf "  %s\n", note
		}' "$1" "$1"
}

# plot data: blocks 0-2, block size in bytes, ref, dev, unrolled (nan if
# none) for fzbench read, dd, fio psync; block 3, every other row: its name,
# figure, and figure -/+ half its spread (the bars)
plot_data() {
	awk -F, '
		function bytes(p,   n, u) {
			sub(/^bs-/, "", p)
			n = p + 0; u = toupper(substr(p, length(p)))
			return u == "K" ? n * 1024 : u == "M" ? n * 1048576 : u == "G" ? n * 1073741824 : n
		}
		NR == 1 { next }
		($2 == "fzbench" && $3 == "read") || $2 == "dd" || ($2 == "fio" && $3 == "seq-read-bs") {
			if ($6 == "n/a" || $9 == "n/a") next
			line = bytes($4) " " $6 " " $9 " " ($14 == "" || $14 == "n/a" ? "nan" : $14) "\n"
			blk[$2 == "fzbench" ? 0 : $2 == "dd" ? 1 : 2] = blk[$2 == "fzbench" ? 0 : $2 == "dd" ? 1 : 2] line
			next
		}
		$20 != "n/a" {
			h = $22 == "n/a" ? 0 : $20 * $22 / 200
			blk[3] = blk[3] sprintf("\"%s %s %s\" %s %.4f %.4f\n", $2, $3, $4, $20, $20 - h, $20 + h)
		}
		END {
			for (i = 0; i < 3; i++)
				printf "# block %d\n%s\n\n", i, blk[i] == "" ? "nan nan nan nan\n" : blk[i]
			printf "# block 3\n%s\n\n", blk[3] == "" ? "\"-\" nan nan nan\n" : blk[3]
		}' "$1"
}

# mode_title MODE: what the mode means, for the table and the plot
mode_title() {
	case $1 in
	tcg) echo "mode TCG: QEMU software emulation, NOT hardware (it runs rep stosb ~8x slower than a movq loop, the reverse of real CPUs)" ;;
	kvm) echo "mode KVM: a hardware-virtualized guest" ;;
	native) echo "mode native: this machine's hardware" ;;
	*) echo "mode $1" ;;
	esac
}

gpstr() { printf "'%s'" "${1//\'/\'\'}"; }	# a gnuplot single-quoted string

main() {
	[[ $# -eq 2 && -f $1/meta.txt ]] || { sed -n '4,9p' "$0" >&2; exit 2; }
	RAW=$1
	local out=$2 mode unrl v
	mode=$(meta mode)
	need jq jq || { echo "report.sh: jq is missing (apt install jq)" >&2; exit 1; }
	mkdir -p "$(dirname "$out")"
	{ dd_samples; fio_samples; client_samples; } | stats | awk '{ print $0, "" }' >"$out.rows"
	fz_rows >>"$out.rows"
	pivot <"$out.rows" >"$out.csv"
	rm -f "$out.rows"
	echo "# $(mode_title "$mode")"
	echo "# kernel: $(meta kernel)   ref: $(meta ref)   dev: $(meta dev)   GB/s: medians of interleaved repetitions, higher is better;" \
		"spread = (max - min) / median"
	echo "# ratio = dev / ref (> 1: dev faster), its spread = dev's + ref's; \"?\" marks a ratio whose spread exceeds" \
		"its effect |ratio - 1|: noise, not a result"
	unrl=$(awk -F, 'NR > 1 && $14 != "" { print 1; exit }' "$out.csv")
	if [[ $unrl == 1 ]]; then
		v=$(meta clear_user_variant)
		echo "# unrl = $(meta dev) with force_variant=unrolled (/dev/zero's movq loop; dev GB/s is" \
			"auto${v:+: $v}), u.ratio = unrl / ref interleaved with it: the figure to compare;" \
			"\"=ratio\": no read loop on that path, the ratio is the figure"
	elif [[ $(meta unrolled) == 0\ \(*\) && $(meta unrolled) != *'not asked'* ]]; then
		echo "# no force_variant=unrolled series: $(meta unrolled | sed 's/^0 (//; s/)$//')"
	fi
	echo "# notes: per series (ref, dev, anon = MAP_ANONYMOUS): minflt = page faults, vmpte_kB = page tables"
	if [[ -s $RAW/clients.raw || -s $RAW/clients.err ]]; then
		echo "# client: the program reads /dev/zero, through fastzero-run with dev (or ref) bound there; param = its sink:" \
			"null = /dev/null, tmpfs = a file on tmpfs (userspace/bench/clients.sh)"
		sed -n 's/^clients: /# client: /p' "$RAW/clients.err" 2>/dev/null || true
	fi
	table "$out.csv"
	plot_data "$out.csv" >"$out.dat"
	if ! need gnuplot gnuplot-nox; then
		echo "warning: no gnuplot (apt install gnuplot-nox): no plot" >&2
		echo "# csv: $out.csv"
		return 0
	fi
	gnuplot -e "datafile=$(gpstr "$out.dat"); outbase=$(gpstr "$out"); refname=$(gpstr "$(meta ref)");
		devname=$(gpstr "$(meta dev)"); hasunrolled=${unrl:-0};
		plottitle=$(gpstr "$(mode_title "$mode")
kernel $(meta kernel), $(meta dev) vs $(meta ref)")" \
		"$BENCH_DIR/plot.gp" 2>"$out.gnuplot.err" || echo "warning: gnuplot failed, see $out.gnuplot.err" >&2
	[[ -s $out.gnuplot.err ]] || rm -f "$out.gnuplot.err"
	echo "# csv: $out.csv   plot: $out.svg $out.png"
}

main "$@"
