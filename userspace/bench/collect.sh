#!/bin/sh
# collect.sh - run dd, the fio jobs, fzbench and the clients for DEV vs REF,
# interleaved, and leave the raw outputs in OUTDIR.  Runs natively (bash or sh) and in the
# busybox VM guest (run-bench.sh puts it in the payload); run-bench.sh turns
# OUTDIR into the table, the CSV and the plot.
#
# usage: collect.sh [-q] [-m MODE] [-o OUTDIR] [-M MMAP_SIZES] [-e] [-u] DEV REF
#   -q          quick: fewer repetitions, shorter samples
#   -m MODE     label for the results: native, kvm or tcg   (default native)
#   -o OUTDIR   where the raw outputs go                     (default /tmp/fzb)
#   -M SIZES    fzbench --mmap-sizes                         (default: fzbench's)
#   -e          print every output file framed by "FZB: file-begin NAME" and
#               "FZB: file-end NAME" lines (the VM's serial log is its only exit)
#   -u          a third series, role U: DEV with fastzero's force_variant
#               parameter set to "unrolled" (the movq loop /dev/zero uses), in
#               every workload but fzbench's mmap ones (no read loop on their
#               path): dd, every fio job, fzbench read, readv and splice, the
#               clients; skipped
#               (meta.txt says why) if the parameter is not writable.  The
#               other series then run with force_variant=auto; the value found
#               at the start is restored at exit.
# Looks next to itself for dd.sh, clients.sh, fzbench (or ../build/fzbench,
# else $FZBENCH_BIN or the one in PATH), fio-jobs/ (or ../../fio-jobs) and
# bin/dd (a GNU dd; busybox dd prints no timing); clients.sh finds
# fastzero-run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
quick=0 mode=native out=/tmp/fzb msizes='' emit=0 want_u=0
# param NAME, policy NAME: the file of the module's parameter NAME, of what
# it chose (NAME in policy/); the one place the bench scripts name where
# fastzero's sysfs files live
param() { echo "/sys/module/fastzero/parameters/$1"; }
policy() { echo "/sys/class/misc/fastzero/policy/$1"; }
fv=$(param force_variant)

usage() {
	sed -n '7,20p' "$0" >&2
	exit 2
}

while getopts qm:o:M:euh opt; do
	case $opt in
	q) quick=1 ;;
	m) mode=$OPTARG ;;
	o) out=$OPTARG ;;
	M) msizes=$OPTARG ;;
	e) emit=1 ;;
	u) want_u=1 ;;
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

fzbench=$(first "$here/fzbench" "$here/../build/fzbench" ${FZBENCH_BIN:+"$FZBENCH_BIN"}) ||
	fzbench=$(command -v fzbench) || fzbench=''
jobdir=$(first "$here/fio-jobs" "$here/../../fio-jobs") || jobdir=''
dd="dd"
if [ -x "$here/bin/dd" ] && "$here/bin/dd" --version >/dev/null 2>&1; then
	dd=$here/bin/dd
fi

if [ "$quick" = 1 ]; then
	dd_args="-r 3 -t 64M -c 16384"
	fio_reps=1 fio_rt=1 fz_args=--quick
	cl_args="-r 3 -n 64M"
else
	dd_args="-r 5 -t 256M -c 131072"
	fio_reps=3 fio_rt=2 fz_args=''
	cl_args="-r 5 -n 512M"
fi

# role U: usable only if force_variant takes "unrolled" and "auto"
unrolled=0 u_why='not asked (-u)' fv_start=''
if [ "$want_u" = 1 ]; then
	if [ ! -w "$fv" ]; then
		u_why="$fv not writable (module not loaded, or no such parameter)"
	elif ! fv_start=$(cat "$fv") || ! printf 'unrolled\n' 2>/dev/null >"$fv" ||
		! printf 'auto\n' 2>/dev/null >"$fv"; then
		u_why="$fv refused unrolled or auto"
	else
		unrolled=1 u_why=''
	fi
fi
# shellcheck source=SCRIPTDIR/roles.sh
. "$here/roles.sh"
set_variant() { variant "$fv" "$1"; }
restore_variant() {
	[ "$unrolled" = 0 ] || [ -z "$fv_start" ] || printf '%s\n' "$fv_start" >"$fv" || true
}
trap restore_variant EXIT
trap 'exit 130' INT TERM

jobs=''
if [ -n "$jobdir" ] && command -v fio >/dev/null 2>&1; then
	jobs=$(ls "$jobdir"/*.fio)
fi
njobs=$(echo "$jobs" | wc -w)
total=$((3 + njobs * fio_reps + unrolled))
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
	echo "unrolled=$unrolled${u_why:+ ($u_why)}"
	[ "$unrolled" = 0 ] || echo "force_variant_start=$fv_start"
	if [ -r "$(policy clear_user_variant)" ]; then
		echo "clear_user_variant=$(cat "$(policy clear_user_variant)")"
	fi
	echo "date=$(date +%Y%m%d-%H%M%S)"
} >"$out/meta.txt"

[ "$unrolled" = 0 ] || u_label=" vs $dev force_variant=unrolled"

# 1. dd sweep: dd.sh interleaves the devices (and role U) itself
progress "dd sweep, 512..64M, $dev vs $ref${u_label:-}"
[ "$unrolled" = 0 ] || dd_args="$dd_args -u $fv"
# shellcheck disable=SC2086 # dd_args is a list of options
sh "$here/dd.sh" $dd_args -d "$dd" "$dev" "$ref" >"$out/dd.raw" 2>"$out/dd.err" || true

# 2. fio: every job file, both devices (and role U for u_jobs), the order
# flipped (rotated, with U) every repetition
fio_one() {	# fio_one JOBFILE ROLE DEV REP
	name=$(basename "$1" .fio)
	fio --filename="$3" --time_based --runtime="$fio_rt" --output-format=json \
		"$1" >"$out/fio-$name-$2-$4.json" 2>"$out/fio-$name-$2-$4.err" || true
}
fio_role() {	# fio_role JOBFILE ROLE REP
	case $2 in
	A)
		[ "$unrolled" = 0 ] || set_variant auto
		fio_one "$1" A "$dev" "$3"
		;;
	B) fio_one "$1" B "$ref" "$3" ;;
	U)
		set_variant unrolled
		fio_one "$1" U "$dev" "$3"
		set_variant auto
		;;
	esac
}
rep=1
while [ "$rep" -le "$fio_reps" ]; do
	for j in $jobs; do
		order=$(roles "$unrolled" "$rep")
		progress "fio $(basename "$j") rep $rep, $order (runtime ${fio_rt}s per job)"
		for role in $order; do
			fio_role "$j" "$role" "$rep"
		done
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

# 4. fzbench again, all but the mmap workloads (whose path has no read
# loop: their ratio is the one to read), with force_variant=unrolled: its
# DEV samples are role U, interleaved with its own REF samples
if [ "$unrolled" = 1 ] && [ -n "$fzbench" ]; then
	progress "fzbench $fz_args --workloads read,readv,splice, $dev force_variant=unrolled"
	set_variant unrolled
	# shellcheck disable=SC2086 # fz_args is empty or one option
	"$fzbench" --dev "$dev" --ref "$ref" --mode "$mode" $fz_args \
		--workloads read,readv,splice --mmap-sizes 0 --csv "$out/fzbench-unrolled.csv" \
		>"$out/fzbench-unrolled.txt" 2>"$out/fzbench-unrolled.err" || true
	set_variant auto
fi

# 5. the clients: unmodified programs on /dev/zero through fastzero-run
progress "clients (head, cat, uutils cat, pv) through fastzero-run, $dev vs $ref${u_label:-}"
[ "$unrolled" = 0 ] || cl_args="$cl_args -u $fv"
# shellcheck disable=SC2086 # cl_args is a list of options
sh "$here/clients.sh" $cl_args "$dev" "$ref" >"$out/clients.raw" 2>"$out/clients.err" || true

if [ "$emit" = 1 ]; then
	for f in "$out"/*; do
		echo "FZB: file-begin $(basename "$f")"
		cat "$f"
		echo "FZB: file-end $(basename "$f")"
	done
fi
echo "FZB: collect done" >&2
