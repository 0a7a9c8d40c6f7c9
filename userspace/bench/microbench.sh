#!/usr/bin/env bash
# microbench.sh - run clearbench natively, keep its CSV and plot it (SVG, PNG); perf's memset beside it.
#
# usage: microbench.sh [-o OUTBASE] [CLEARBENCH ARGS...]
#        microbench.sh --plot CSV OUTBASE   (only the plot of a clearbench CSV)
#   OUTBASE  path without extension (default: FZ_RESULTS/<YYYYmmdd-HHMMSS>-
#            <host>-<uname -r>-<mode>-clearbench); writes OUTBASE.csv,
#            OUTBASE.svg and OUTBASE.png; the table goes to stdout
#   the other arguments go to clearbench unchanged; a --csv FILE among them
#   replaces OUTBASE.csv (and gives OUTBASE when there is no -o)
# The plot's title takes the mode from the CSV (what clearbench measured
# in), says what it means, and that higher is better.
# Then perfbench.sh: "perf bench mem memset -k" at 4K, 2M and 1G chunks for
# each -f function, interleaved with clearbench on the same loop, chunk and
# total, into OUTBASE-perf.csv (its own env: FZ_PERF=0 leaves it out).
# Env: QUICK=1     add --quick (perfbench: 2 chunks, 1 repetition)
#      FZ_RESULTS  output directory (default: results/ at the top of the repo)
#      CLEARBENCH  the binary (default: userspace/build/clearbench)
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
US_DIR=$(cd "$BENCH_DIR/.." && pwd)
REPO=$(cd "$US_DIR/.." && pwd)
CLEARBENCH=${CLEARBENCH:-$US_DIR/build/clearbench}
TABLE=

need() {	# need CMD PKG: install PKG if CMD is missing
	command -v "$1" >/dev/null 2>&1 && return 0
	dpkg -s "$2" >/dev/null 2>&1 && return 0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2 ||
		{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2; }
}

gpstr() { printf "'%s'" "${1//\'/\'\'}"; }	# a gnuplot single-quoted string

cpu_model() {
	local m
	m=$(sed -n 's/^model name[[:space:]]*: *//p;T;q' /proc/cpuinfo 2>/dev/null || true)
	echo "${m:-unknown CPU ($(uname -m))}"
}

# gnuplot -e assignments for the panels: the matrix workloads (smallest
# cache-resident buffer, largest DRAM-resident one, as clearbench's WARM_LIMIT
# of 8M) and their chunk sizes as x tics; short if it was run
panel_vars() {	# panel_vars CSV
	awk -F, '
		function bytes(p,   n, u) {
			n = p + 0; u = substr(p, length(p))
			return u == "K" ? n * 2^10 : u == "M" ? n * 2^20 : u == "G" ? n * 2^30 : n
		}
		NR > 1 && $3 == "short" { short = "short" }
		NR > 1 && $3 ~ /^matrix-/ {
			wl = $3
			if (!(wl in size)) { size[wl] = bytes(substr(wl, 8)); tics[wl] = "" }
			if (!((wl, $4) in seen)) {
				seen[wl, $4] = 1
				tics[wl] = tics[wl] (tics[wl] == "" ? "" : " ") $4
			}
		}
		END {
			for (wl in size)
				if (size[wl] <= 8 * 2^20) {
					if (cache == "" || size[wl] < size[cache]) cache = wl
				} else if (dram == "" || size[wl] > size[dram]) {
					dram = wl
				}
			printf "cachewl=\047%s\047; dramwl=\047%s\047; shortwl=\047%s\047; ", cache, dram, short
			printf "cacheticks=\047%s\047; dramticks=\047%s\047", tics[cache], tics[dram]
		}' "$1"
}

# mode_title MODE: what the mode of the CSV means, for the plot's title
mode_title() {
	case $1 in
	native) echo "mode native (userspace, this CPU: real hardware)" ;;
	tcg) echo "mode TCG (QEMU software emulation: NOT hardware, rep stosb ~8x slower than on real CPUs)" ;;
	*) echo "mode $1" ;;
	esac
}

# plot CSV OUTBASE [ERMS_THRESHOLD [CPU]]: OUTBASE.svg and .png of a
# clearbench CSV; 0 when written (or no gnuplot: a warning), 1 when
# gnuplot failed
plot() {
	local csv=$1 out=$2 thr=${3:-0} cpu=${4:-} mode title sub rc=0
	if ! need gnuplot gnuplot-nox; then
		echo "warning: no gnuplot, no plots" >&2
		return 0
	fi
	mode=$(awk -F, 'NR == 2 { print $2; exit }' "$csv")
	title="clearbench (driver/arch/x86/clear_loops.S): $(mode_title "${mode:-unknown}")${cpu:+, $cpu}, $(date -r "$csv" '+%Y-%m-%d %H:%M')"
	sub="${cpu:+kernel $(uname -r), host $(hostname -s 2>/dev/null || uname -n); }points: medians, bars: min..max; GB/s: higher is better"
	gnuplot -e "csvfile=$(gpstr "$csv"); outbase=$(gpstr "$out"); plottitle=$(gpstr "$title"); subtitle=$(gpstr "$sub"); ermsthr=$thr; $(panel_vars "$csv")" \
		"$BENCH_DIR/plot-clear.gp" 2>"$out.gnuplot.err" || rc=$?
	if ((rc)); then
		echo "warning: gnuplot failed, see $out.gnuplot.err" >&2
		return 1
	fi
	[[ -s $out.gnuplot.err ]] || rm -f "$out.gnuplot.err"
}

main() {
	local out='' csv='' mode=native args=() a prev='' host now thr
	if [[ ${1:-} == --plot ]]; then
		[[ $# == 3 && -s $2 ]] || { sed -n '4,5p' "$0" >&2; exit 2; }
		plot "$2" "$3"
		return
	fi
	if [[ ${1:-} == -o ]]; then
		[[ $# -ge 2 ]] || { sed -n '4,15p' "$0" >&2; exit 2; }
		out=$2
		shift 2
	fi
	for a in "$@"; do	# what clearbench will use: the last --csv / --mode wins
		case $prev in
		--csv) csv=$a ;;
		--mode) mode=$a ;;
		esac
		case $a in
		--csv=*) csv=${a#--csv=} ;;
		--mode=*) mode=${a#--mode=} ;;
		esac
		prev=$a
	done
	[[ ${QUICK:-0} != 1 ]] || args+=(--quick)
	[[ -x $CLEARBENCH ]] || make -s -C "$US_DIR" "$CLEARBENCH" >&2
	now=$(date +%s)
	host=$(hostname -s 2>/dev/null || uname -n)
	if [[ -z $out && -n $csv ]]; then
		out=${csv%.csv}
	elif [[ -z $out ]]; then
		out=${FZ_RESULTS:-$REPO/results}/$(date -d "@$now" +%Y%m%d-%H%M%S)-$host-$(uname -r)-$mode-clearbench
	fi
	[[ -n $csv ]] || { csv=$out.csv; args+=(--csv "$csv"); }
	mkdir -p "$(dirname "$out")" "$(dirname "$csv")"

	TABLE=$(mktemp)
	trap 'rm -f "$TABLE"' EXIT
	"$CLEARBENCH" "${args[@]}" "$@" | tee "$TABLE"
	thr=$(sed -n 's/^# fz_erms_threshold: \([0-9]*\)$/\1/p' "$TABLE")
	echo
	CLEARBENCH=$CLEARBENCH "$BENCH_DIR/perfbench.sh" -o "$out" || echo "warning: perfbench.sh failed" >&2

	if plot "$csv" "$out" "${thr:-0}" "$(cpu_model)" && [[ -s $out.svg ]]; then
		echo "# csv: $csv   plot: $out.svg $out.png"
	else
		echo "# csv: $csv"
	fi
}

main "$@"
