#!/bin/sh
# collect.sh - run dd, the fio jobs and fzbench for DEV vs REF, interleaved,
# and leave the raw outputs in OUTDIR.  Runs natively (bash or sh) and in the
# busybox VM guest (run-bench.sh puts it in the payload); run-bench.sh turns
# OUTDIR into the table, the CSV and the plot.
#
# usage: collect.sh [-q] [-m MODE] [-o OUTDIR] [-M MMAP_SIZES] [-e] DEV REF
#   -q          quick: fewer repetitions, shorter samples
#   -m MODE     label for the results: native, kvm or tcg   (default native)
#   -o OUTDIR   where the raw outputs go                     (default /tmp/fzb)
#   -M SIZES    fzbench --mmap-sizes                         (default: fzbench's)
#   -e          print every output file framed by "FZB: file-begin NAME" and
#               "FZB: file-end NAME" lines (the VM's serial log is its only exit)
# Looks next to itself for dd.sh, fzbench (or ../build/fzbench), fio-jobs/
# (or ../../fio-jobs) and bin/dd (a GNU dd; busybox dd prints no timing).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
quick=0 mode=native out=/tmp/fzb msizes='' emit=0

usage() {
	sed -n '7,13p' "$0" >&2
	exit 2
}

while getopts qm:o:M:eh opt; do
	case $opt in
	q) quick=1 ;;
	m) mode=$OPTARG ;;
	o) out=$OPTARG ;;
	M) msizes=$OPTARG ;;
	e) emit=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
dev=$1 ref=$2

first() {
	for f in "$@"; do
		if [ -e "$f" ]; then
			echo "$f"
			return 0
		fi
	done
	return 1
}

fzbench=$(first "$here/fzbench" "$here/../build/fzbench") || fzbench=''
jobdir=$(first "$here/fio-jobs" "$here/../../fio-jobs") || jobdir=''
dd="dd"
if [ -x "$here/bin/dd" ] && "$here/bin/dd" --version >/dev/null 2>&1; then
	dd=$here/bin/dd
fi

if [ "$quick" = 1 ]; then
	dd_args="-r 3 -t 64M -c 16384"
	fio_reps=1 fio_rt=1 fz_args=--quick
else
	dd_args="-r 5 -t 256M -c 131072"
	fio_reps=3 fio_rt=2 fz_args=''
fi

jobs=''
if [ -n "$jobdir" ] && command -v fio >/dev/null 2>&1; then
	jobs=$(ls "$jobdir"/*.fio)
fi
njobs=$(echo "$jobs" | wc -w)
total=$((2 + njobs * fio_reps))
step=0

progress() {
	step=$((step + 1))
	echo "[$step/$total] $*" >&2
}

mkdir -p "$out"
rm -f "$out"/*
{
	echo "mode=$mode"
	echo "dev=$dev"
	echo "ref=$ref"
	echo "kernel=$(uname -r)"
	echo "host=$(uname -n)"
	echo "nproc=$(nproc 2>/dev/null || echo '?')"
	echo "quick=$quick"
	echo "dd=$dd"
	echo "date=$(date +%Y%m%d-%H%M%S)"
} >"$out/meta.txt"

# 1. dd sweep: dd.sh interleaves the devices itself
progress "dd sweep, 512..64M, $dev vs $ref"
# shellcheck disable=SC2086 # dd_args is a list of options
sh "$here/dd.sh" $dd_args -d "$dd" "$dev" "$ref" >"$out/dd.raw" 2>"$out/dd.err" || true

# 2. fio: every job file, both devices, the order flipped every repetition
fio_one() {	# fio_one JOBFILE ROLE DEV REP
	name=$(basename "$1" .fio)
	fio --filename="$3" --time_based --runtime="$fio_rt" --output-format=json \
		"$1" >"$out/fio-$name-$2-$4.json" 2>"$out/fio-$name-$2-$4.err" || true
}
rep=1
while [ "$rep" -le "$fio_reps" ]; do
	for j in $jobs; do
		progress "fio $(basename "$j") rep $rep (runtime ${fio_rt}s per job)"
		if [ $((rep % 2)) -eq 1 ]; then
			fio_one "$j" A "$dev" "$rep"
			fio_one "$j" B "$ref" "$rep"
		else
			fio_one "$j" B "$ref" "$rep"
			fio_one "$j" A "$dev" "$rep"
		fi
	done
	rep=$((rep + 1))
done

# 3. fzbench: read sweep, readv, splice, mmap (it interleaves itself)
progress "fzbench $fz_args ${msizes:+--mmap-sizes $msizes}"
if [ -n "$fzbench" ]; then
	# shellcheck disable=SC2086 # fz_args is empty or one option
	"$fzbench" --dev "$dev" --ref "$ref" --mode "$mode" $fz_args \
		${msizes:+--mmap-sizes "$msizes"} --csv "$out/fzbench.csv" \
		>"$out/fzbench.txt" 2>"$out/fzbench.err" || true
else
	echo "fzbench not found" >"$out/fzbench.err"
fi

if [ "$emit" = 1 ]; then
	for f in "$out"/*; do
		echo "FZB: file-begin $(basename "$f")"
		cat "$f"
		echo "FZB: file-end $(basename "$f")"
	done
fi
echo "FZB: collect done" >&2
