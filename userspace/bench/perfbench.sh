#!/usr/bin/env bash
# perfbench.sh - perf bench mem memset -k beside clearbench, interleaved: an outside tool checks ours.
#
# usage: perfbench.sh [-o OUTBASE]
#   writes OUTBASE-perf.csv (default OUTBASE: FZ_RESULTS/<YYYYmmdd-HHMMSS>-
#   <host>-<uname -r>-native); the table goes to stdout
#
# The clear_pages() series measured its loops with
#   perf bench mem memset -k <chunk> -s 4GB -f x86-64-stosq
# This runs that command for every chunk size and every -f function the perf
# build offers, and after or before each (alternating) clearbench on the same
# loop, chunk and total (clearbench --sections matrix --bufs TOTAL --chunks
# CHUNK --loops LOOP --reps 1 --target-ms 1: one untimed pass, then one timed
# pass, as perf's prefault pass and its timed loop), both pinned to one CPU,
# and prints the medians and how far apart they are.  Mode: native userspace.
#
# Which loop is "the same loop": perf's x86-64-stosq is the kernel's
# __memset() from arch/x86/lib/memset_64.S with its ALTERNATIVE elided; since
# 6.4 that is one "rep stosb" for the whole length (clearbench's rep_stosb),
# before it "rep stosq" plus a bytewise tail (rep_stosq); x86-64-unrolled is
# memset_orig (8 movq per 64 bytes; clearbench's unrolled); "default" is
# glibc's memset(), which no clearbench loop is (printed alone).
#
# perf: -k needs perf 6.18 or newer (Debian 12's linux-perf 6.1 has none).
# FZ_PERF=/path/to/perf, else the host's perf if it has -k, else the sid
# chroot's (tests/vm/kernels.sh: $FZ_CACHE/sid/root), run through the
# chroot's own dynamic loader as the harness runs sid's QEMU (it runs on any
# kernel; no chroot(2), no lock held while timing).  As root and without
# QUICK=1, linux-perf is installed in the chroot when missing (under the
# chroot's lock, as fz_sid_run does); the chroot itself is made only with
# FZ_PERF=sid (debootstrap, ~5 min, once).  No perf: a line says so, exit
# status 0.
#
# Env: QUICK=1          total 256M, chunks 4K,2M, x86-64-stosq, 1 repetition
#      FZ_PERF          auto (default), sid (the chroot's, made when
#                       missing), a perf binary, or 0: skip
#      FZ_PERF_TOTAL    bytes per run, perf's -s (default 1G: see docs/benchmarks.md; 4G
#                       took 2-10 s per perf run on the 2-core development
#                       host, mostly MAP_POPULATE of 4 GiB)
#      FZ_PERF_CHUNKS   perf's -k values (default 4K,2M,1G)
#      FZ_PERF_FUNCS    perf's -f values (default: all the build offers)
#      FZ_PERF_REPS     repetitions (default 5)
#      FZ_PERF_CPU      CPU both are pinned to (default: the one this starts on)
#      FZ_RESULTS       output directory (default results/)
#      CLEARBENCH       the binary (default userspace/build/clearbench)
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
US_DIR=$(cd "$BENCH_DIR/.." && pwd)
REPO=$(cd "$US_DIR/.." && pwd)
CLEARBENCH=${CLEARBENCH:-$US_DIR/build/clearbench}
PERF=()
PERF_FROM=
TMP=

say() { printf '# perfbench: %s\n' "$*" >&2; }

has_chunk() {	# has_chunk PERF...: the build knows "perf bench mem memset -k"
	local help
	help=$("$@" bench mem memset -h 2>&1) || true	# -h exits 129
	grep -q -- '--chunk' <<<"$help"
}

# The sid chroot's perf, through the chroot's loader and libraries.
sid_perf() {
	local r=$1 lib=$1/usr/lib/x86_64-linux-gnu
	PERF=(env LC_ALL=C "$r/lib64/ld-linux-x86-64.so.2" --library-path
		"$lib:$r/lib/x86_64-linux-gnu" "$r/usr/bin/perf")
}

resolve_perf() {
	local root=${FZ_CACHE:-/var/cache/fastzero}/sid/root want=${FZ_PERF:-auto}
	if [[ $want != auto && $want != sid ]]; then
		PERF=(env LC_ALL=C "$want") PERF_FROM="FZ_PERF=$want"
		has_chunk "${PERF[@]}" && return 0
		say "$want has no 'perf bench mem memset -k'"
		return 1
	fi
	if [[ $want == auto ]] && command -v perf >/dev/null 2>&1 && has_chunk perf; then
		PERF=(env LC_ALL=C perf) PERF_FROM="host $(command -v perf)"
		return 0
	fi
	if [[ ! -x $root/usr/bin/perf ]]; then
		if [[ $EUID != 0 || ${QUICK:-0} == 1 ||
		      ($want == auto && ! -e $root/.fz-debootstrap-ok) ]]; then
			say "no perf with -k here (the host's has none; $root has no linux-perf):" \
				"as root, FZ_PERF=sid (without QUICK=1) installs sid's, making the" \
				"chroot if needed (debootstrap, ~5 min once); or set FZ_PERF=/path/to/perf"
			return 1
		fi
		(
			# shellcheck source=SCRIPTDIR/../../tests/vm/kernels.sh
			source "$REPO/tests/vm/kernels.sh"
			fz_sid_ensure
			fz_sid_apt_update
			fz_log "installing linux-perf in the sid chroot (perf bench mem memset -k)"
			fz_sid_run apt-get install -y -qq --no-install-recommends linux-perf >&2
		) || { say "installing sid's linux-perf failed"; return 1; }
	fi
	sid_perf "$root"
	PERF_FROM="sid chroot $root"
	has_chunk "${PERF[@]}" && return 0
	say "$root/usr/bin/perf has no 'perf bench mem memset -k'"
	return 1
}

# The -f functions this perf build offers, comma-separated.
perf_funcs() {
	local list
	list=$("${PERF[@]}" bench mem memset -f help 2>&1) || true	# exits 1
	awk '$2 == "..." { printf "%s%s", n++ ? "," : "", $1 }' <<<"$list"
}

# clearbench's loop for perf's function FN ("-": none).
loop_for() {	# loop_for FN PERFVERSION
	case $1 in
	x86-64-unrolled) echo unrolled ;;
	x86-64-stosq)	# __memset: rep stosb since 6.4, rep stosq + tail before
		if awk -v v="$2" 'BEGIN { split(v, a, "."); exit !(a[1] < 6 || (a[1] == 6 && a[2] < 4)) }'; then
			echo rep_stosq
		else
			echo rep_stosb
		fi ;;
	x86-64-stosb) echo rep_stosb ;;
	x86-64-movnt*) echo nt ;;
	*) echo - ;;
	esac
}

# perf's size spelling: 4K -> 4KB
perf_size() { [[ $1 =~ ^[0-9]+[KMGT]$ ]] && echo "${1}B" || echo "$1"; }

bytes() {	# bytes 4K -> 4096
	awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(n "") + 1, 1))
		m = u == "K" ? 2^10 : u == "M" ? 2^20 : u == "G" ? 2^30 : u == "T" ? 2^40 : 1
		printf "%.0f\n", n * m }'
}

run_perf() {	# run_perf CPU FN CHUNK TOTAL: GB/s (1e9), or "nan"
	local out
	out=$(taskset -c "$1" "${PERF[@]}" bench --format=simple mem memset \
		-f "$2" -k "$(perf_size "$3")" -s "$(perf_size "$4")" 2>&1) || true
	awk '/^[0-9.]+$/ { v = $1 } END { if (v == "") print "nan"; else printf "%.4f\n", v / 1e9 }' <<<"$out"
}

run_clearbench() {	# run_clearbench CPU LOOP CHUNK TOTAL: GB/s, or "nan"
	local csv=$TMP/cb.csv thp=()
	# perf's buffer is MAP_POPULATE'd without madvise: huge pages only
	# under THP "always"; clearbench chooses explicitly, so follow it
	grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null && thp=(--thp)
	rm -f "$csv"
	taskset -c "$1" "$CLEARBENCH" --sections matrix --bufs "$4" --chunks "$3" \
		--loops "$2" --reps 1 --target-ms 1 "${thp[@]}" --csv "$csv" >/dev/null 2>&1 || true
	awk -F, -v l="$2" 'NR > 1 && $5 == l { v = $7 } END { print v == "" ? "nan" : v }' "$csv" 2>/dev/null ||
		echo nan
}

main() {
	local out='' host ver total chunks funcs reps cpu fns=() ks=() cfgs=() r i k n c
	local fn chunk loop v first csv
	if [[ ${1:-} == -o ]]; then
		[[ $# -ge 2 ]] || { sed -n '4,6p' "$0" >&2; exit 2; }
		out=$2
	fi
	if [[ ${FZ_PERF:-} == 0 ]]; then
		say "FZ_PERF=0: skipped"
		return 0
	fi
	resolve_perf || return 0
	[[ -x $CLEARBENCH ]] || make -s -C "$US_DIR" "$CLEARBENCH" >&2
	ver=$("${PERF[@]}" --version 2>/dev/null | awk '{ print $3 }')
	if [[ ${QUICK:-0} == 1 ]]; then
		total=${FZ_PERF_TOTAL:-256M} chunks=${FZ_PERF_CHUNKS:-4K,2M}
		funcs=${FZ_PERF_FUNCS:-x86-64-stosq} reps=${FZ_PERF_REPS:-1}
	else
		total=${FZ_PERF_TOTAL:-1G} chunks=${FZ_PERF_CHUNKS:-4K,2M,1G}
		funcs=${FZ_PERF_FUNCS:-$(perf_funcs)}
		reps=${FZ_PERF_REPS:-5}
	fi
	cpu=${FZ_PERF_CPU:-$(awk '{ print $39 }' /proc/self/stat)}
	IFS=, read -ra fns <<<"$funcs"
	IFS=, read -ra ks <<<"$chunks"
	for chunk in "${ks[@]}"; do
		(($(bytes "$chunk") <= $(bytes "$total"))) || { say "chunk $chunk > total $total: left out"; continue; }
		for fn in "${fns[@]}"; do
			cfgs+=("$chunk $fn $(loop_for "$fn" "$ver")")
		done
	done
	((${#cfgs[@]})) || { say "nothing to run"; return 0; }
	host=$(hostname -s 2>/dev/null || uname -n)
	[[ -n $out ]] || out=${FZ_RESULTS:-$REPO/results}/$(date +%Y%m%d-%H%M%S)-$host-$(uname -r)-native
	csv=$out-perf.csv
	mkdir -p "$(dirname "$csv")"
	TMP=$(mktemp -d)
	trap 'rm -rf "$TMP"' EXIT
	say "perf $ver ($PERF_FROM) vs clearbench: ${#cfgs[@]} configurations x $reps," \
		"total $total per run, CPU $cpu"

	# samples: one line per run, "i tool GB/s"; each repetition visits the
	# configurations in the other direction, and the tool that goes first
	# alternates from one configuration to the next
	n=${#cfgs[@]}
	for ((r = 0; r < reps; r++)); do
		printf '# perfbench: [%d/%d]\n' $((r + 1)) "$reps" >&2
		for ((k = 0; k < n; k++)); do
			i=$k
			((r % 2 == 0)) || i=$((n - 1 - k))
			read -r chunk fn loop <<<"${cfgs[i]}"
			first=$(((i + r) % 2))
			for c in 0 1; do
				if ((c == first)); then
					v=$(run_perf "$cpu" "$fn" "$chunk" "$total")
					echo "$i perf $v"
				elif [[ $loop != - ]]; then
					v=$(run_clearbench "$cpu" "$loop" "$chunk" "$total")
					echo "$i cb $v"
				fi
			done
		done
	done >"$TMP/samples"

	printf '%s\n' "${cfgs[@]}" >"$TMP/cfgs"
	awk -v total="$total" -v ver="$ver" -v from="$PERF_FROM" -v reps="$reps" \
	    -v cpu="$cpu" -v csv="$csv" -v thp="$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" '
		function med(a, m,   t, i, j, x) {	# median of a[1..m], sorted in place
			for (i = 2; i <= m; i++) {
				x = a[i]
				for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
				a[j + 1] = x
			}
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		}
		function stats(key,   m, a, i, parts) {
			m = split(s[key], parts, " ")
			n_ok = 0
			for (i = 1; i <= m; i++) if (parts[i] != "nan") a[++n_ok] = parts[i] + 0
			if (!n_ok) { st_med = st_min = st_max = "nan"; st_spr = "nan"; return }
			st_med = med(a, n_ok); st_min = a[1]; st_max = a[n_ok]
			st_spr = st_med > 0 ? 100 * (st_max - st_min) / st_med : 0
		}
		FNR == NR { cfg[NR - 1] = $0; ncfg = NR; next }
		{ s[$1 " " $2] = s[$1 " " $2] " " $3 }
		END {
			printf "# perf bench mem memset -k CHUNK -s %s -f FN (perf %s, %s) vs clearbench (driver/arch/x86/clear_loops.S), same loop, chunk and total\n", total, ver, from
			printf "# mode: native userspace; %s interleaved repetitions, both pinned to CPU %s; THP %s; GB/s = 1e9 B/s, medians; spread = (max - min) / median; best ratio = best clearbench / best perf\n", reps, cpu, thp
			printf "%-6s %-16s %9s %7s   %-10s %9s %7s %8s %8s %10s\n", "chunk", "perf -f", "perf GB/s", "spread", "clearbench", "GB/s", "spread", "cb/perf", "diff", "best ratio"
			print "chunk,total,perf_function,perf_median,perf_min,perf_max,perf_spread_pct,loop,cb_median,cb_min,cb_max,cb_spread_pct,ratio,best_ratio,n" > csv
			worst = bworst = -1
			for (i = 0; i < ncfg; i++) {
				split(cfg[i], c, " ")
				stats(i " perf"); pm = st_med; pmin = st_min; pmax = st_max; ps = st_spr; pn = n_ok
				if (c[3] == "-") {
					printf "%-6s %-16s %9s %6s%%   %-10s %9s %7s %8s %8s %10s\n", c[1], c[2], pm == "nan" ? "failed" : sprintf("%.2f", pm), ps == "nan" ? "-" : sprintf("%.1f", ps), "(none)", "-", "-", "-", "-", "-"
					printf "%s,%s,%s,%s,%s,%s,%s,,,,,,,,%d\n", c[1], total, c[2], pm, pmin, pmax, ps, pn >> csv
					continue
				}
				stats(i " cb"); cm = st_med; cs = st_spr
				ratio = (pm != "nan" && cm != "nan" && pm > 0) ? cm / pm : "nan"
				best = (pm != "nan" && cm != "nan" && pmax > 0) ? st_max / pmax : "nan"
				printf "%-6s %-16s %9s %6s%%   %-10s %9s %6s%% %8s %8s %10s\n", c[1], c[2],
					pm == "nan" ? "failed" : sprintf("%.2f", pm), ps == "nan" ? "-" : sprintf("%.1f", ps),
					c[3], cm == "nan" ? "failed" : sprintf("%.2f", cm), cs == "nan" ? "-" : sprintf("%.1f", cs),
					ratio == "nan" ? "-" : sprintf("%.2fx", ratio),
					ratio == "nan" ? "-" : sprintf("%+.1f%%", 100 * (ratio - 1)),
					best == "nan" ? "-" : sprintf("%.2fx", best)
				printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d\n", c[1], total, c[2], pm, pmin, pmax, ps,
					c[3], cm, st_min, st_max, cs, ratio, best, pn >> csv
				if (ratio != "nan") {
					d = ratio > 1 ? ratio - 1 : 1 - ratio
					if (d > worst) { worst = d; wrow = c[1] " " c[2] }
					d = best > 1 ? best - 1 : 1 - best
					if (d > bworst) { bworst = d; brow = c[1] " " c[2] }
				}
			}
			if (worst >= 0)
				printf "# clearbench vs perf: medians at most %.1f%% apart (%s), best of each at most %.1f%% (%s)\n", 100 * worst, wrow, 100 * bworst, brow
			else
				print "# clearbench vs perf: no pair measured"
		}' "$TMP/cfgs" "$TMP/samples"
	echo "# csv: $csv"
}

main "$@"
