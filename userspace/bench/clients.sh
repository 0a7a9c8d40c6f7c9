#!/bin/sh
# clients.sh - unmodified programs reading /dev/zero, through fastzero-run, on DEV and on REF, interleaved.
#
# usage: clients.sh [-r REPS] [-n BYTES] [-t TMPFS_DIR] [-u PARAM] [-R FASTZERO_RUN] DEV REF
#   -r REPS     repetitions per (client, sink, device)             (default 5)
#   -n BYTES    bytes each client reads, e.g. 512M (K, M, G binary) (default 512M)
#   -t DIR      a tmpfs directory for the "tmpfs" sink (default: the first
#               of /dev/shm, /tmp, /run that is a tmpfs; none: no tmpfs rows)
#   -u PARAM    a third series, role U: DEV again with PARAM (fastzero's
#               force_variant file) set to "unrolled"; "auto" before every
#               A sample, and left at "auto"
#   -R PROG     fastzero-run (default: next to this script, ../fastzero-run,
#               else the one in PATH)
# Every sample runs `FASTZERO_DEV=<device> fastzero-run sh clients.sh --one
# ...`: the program opens /dev/zero by name, and the device is bind-mounted
# there (role A and U: DEV, role B: REF, bound on itself, so that both pay
# the same namespace).  The time is taken inside, around the program alone.
# The clients (WORKLOAD), each into /dev/null and into a tmpfs file (SINK):
# Each program is the one in PATH that is not busybox (busybox sh prefers
# its own head and cat).
#   head        GNU head -c BYTES /dev/zero (read(2) of 8 KiB)
#   cat|head    GNU cat /dev/zero | head -c BYTES (cat reads 128 KiB)
#   uucat|head  uutils coreutils' cat (Debian's rust-coreutils, the
#               multi-call binary "coreutils cat") | head -c BYTES: it
#               splices /dev/zero into a pipe of its own, then into its stdout
#   pv          pv -q -S -s BYTES /dev/zero (its splice needs a pipe on one
#               side: into a file it reads and writes)
#   pv|cat      pv ... | cat: pv splices /dev/zero into the pipe
# A client that is missing (or a cat or head that is not GNU's) has no rows;
# clients.why says why.  Raw output, one line per sample:
#   client WORKLOAD SINK ROLE(A|B|U) REP BYTES SECONDS GBPS   (GBPS n/a: failed)
# POSIX sh: bash or dash on the host, busybox sh in the VM guest.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
WORKLOADS='head cat|head uucat|head pv pv|cat'

now() {	# seconds, to the microsecond at least
	if [ -n "${EPOCHREALTIME:-}" ]; then
		echo "$EPOCHREALTIME"
	else
		date +%s.%N
	fi
}

# one WORKLOAD BYTES SINKFILE: inside fastzero-run; prints "T0 T1 STATUS".
# The programs by path (FZ_HEAD, FZ_CAT, FZ_COREUTILS, FZ_PV): busybox sh
# runs its own head and cat before any in PATH.
one() {
	wl=$1 n=$2 out=$3 rc=0
	t0=$(now)
	# shellcheck disable=SC2002 # cat is the program measured
	case $wl in
	head) "$FZ_HEAD" -c "$n" /dev/zero >"$out" || rc=$? ;;
	'cat|head') "$FZ_CAT" /dev/zero 2>/dev/null | "$FZ_HEAD" -c "$n" >"$out" || rc=$? ;;
	'uucat|head') "$FZ_COREUTILS" cat /dev/zero 2>/dev/null | "$FZ_HEAD" -c "$n" >"$out" || rc=$? ;;
	pv) "$FZ_PV" -q -S -s "$n" /dev/zero >"$out" || rc=$? ;;
	'pv|cat') "$FZ_PV" -q -S -s "$n" /dev/zero | "$FZ_CAT" >"$out" || rc=$? ;;
	*) rc=2 ;;
	esac
	t1=$(now)
	echo "$t0 $t1 $rc"
}

if [ "${1:-}" = --one ]; then
	shift
	one "$@"
	exit 0
fi

reps=5 bytes=512M tdir='' param='' fzrun=''

usage() {
	sed -n '4,14p' "$0" >&2
	exit 2
}

while getopts r:n:t:u:R:h opt; do
	case $opt in
	r) reps=$OPTARG ;;
	n) bytes=$OPTARG ;;
	t) tdir=$OPTARG ;;
	u) param=$OPTARG ;;
	R) fzrun=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
dev=$1 ref=$2

case $bytes in
*[kK]) n=$((${bytes%?} * 1024)) ;;
*M) n=$((${bytes%?} * 1048576)) ;;
*G) n=$((${bytes%?} * 1073741824)) ;;
*) n=$((bytes)) ;;
esac

why() { echo "clients: $*" >&2; }

if [ -z "$fzrun" ]; then
	for f in "$here/fastzero-run" "$here/../fastzero-run"; do
		[ -x "$f" ] && fzrun=$f && break
	done
	[ -n "$fzrun" ] || fzrun=$(command -v fastzero-run) || { why "no fastzero-run: no client rows"; exit 0; }
fi
if ! err=$(FASTZERO_DEV=$ref "$fzrun" true 2>&1); then
	why "fastzero-run does not run here ($err): no client rows"
	exit 0
fi

# the tmpfs sink
is_tmpfs() { [ -d "$1" ] && [ -w "$1" ] && [ "$(stat -f -c %T "$1" 2>/dev/null)" = tmpfs ]; }
if [ -z "$tdir" ]; then
	for d in /dev/shm /tmp /run; do
		if is_tmpfs "$d"; then tdir=$d && break; fi
	done
fi
sinks=null
if [ -n "$tdir" ] && is_tmpfs "$tdir"; then
	sinks='null tmpfs'
else
	why "no tmpfs directory${tdir:+ ($tdir is not one)}: no tmpfs rows"
fi
sinkfile=$tdir/fz-client.$$

# the clients this machine has: GNU cat and head, uutils' coreutils, pv.
# path NAME: NAME's file in PATH that is not busybox
path() {
	for d in $(echo "$PATH" | tr : ' '); do
		if [ -f "$d/$1" ] && [ -x "$d/$1" ]; then
			case $(readlink -f "$d/$1") in
			*/busybox) ;;
			*) echo "$d/$1" && return 0 ;;
			esac
		fi
	done
	echo "$1"	# not found: run fails, and says so
	return 1
}
FZ_HEAD=$(path head) || true
FZ_CAT=$(path cat) || true
FZ_COREUTILS=$(path coreutils) || true
FZ_PV=$(path pv) || true
export FZ_HEAD FZ_CAT FZ_COREUTILS FZ_PV
gnu() { "$1" --version 2>/dev/null | head -n 1 | grep -q 'GNU coreutils'; }
uucat() { "$FZ_COREUTILS" cat --version >/dev/null 2>&1; }
pv_in() { "$FZ_PV" --version >/dev/null 2>&1; }
usable() {	# usable WORKLOAD
	case $1 in
	head) gnu "$FZ_HEAD" ;;
	'cat|head') gnu "$FZ_CAT" && gnu "$FZ_HEAD" ;;
	'uucat|head') uucat && gnu "$FZ_HEAD" ;;
	pv) pv_in ;;
	'pv|cat') pv_in && gnu "$FZ_CAT" ;;
	esac
}
have=''
for wl in $WORKLOADS; do
	if usable "$wl"; then
		have="$have $wl"
	else
		why "no $wl rows: it needs GNU cat and head (coreutils), uutils' coreutils (rust-coreutils) or pv (pv), as its name says"
	fi
done
[ -n "$have" ] || exit 0
for p in "$FZ_HEAD" "$FZ_CAT" "$FZ_COREUTILS cat" "$FZ_PV"; do
	# shellcheck disable=SC2086 # "coreutils cat" is two words
	v=$($p --version 2>/dev/null | head -n 1) || v=''
	[ -z "$v" ] || why "version: $p: $v"
done

# shellcheck source=SCRIPTDIR/roles.sh
. "$here/roles.sh"

# sample ROLE WORKLOAD SINK REP: one run -> one raw line
sample() {
	case $1 in
	B) d=$ref ;;
	*) d=$dev ;;
	esac
	case $3 in
	null) out=/dev/null ;;
	*) out=$sinkfile ;;
	esac
	if [ -n "$param" ]; then
		case $1 in
		A) variant "$param" auto ;;
		U) variant "$param" unrolled ;;
		esac
	fi
	r=$(FASTZERO_DEV=$d "$fzrun" sh "$self" --one "$2" "$n" "$out" 2>/dev/null) || r=''
	[ "$1" != U ] || variant "$param" auto
	[ "$out" = /dev/null ] || rm -f "$out"
	echo "$r" | awk -v wl="$2" -v sink="$3" -v role="$1" -v rep="$4" -v n="$n" '
		NF == 3 && $3 == 0 && $2 > $1 {
			printf "client %s %s %s %s %d %.6f %.4f\n", wl, sink, role, rep, n, $2 - $1, n / ($2 - $1) / 1e9
			ok = 1
		}
		END { if (!ok) printf "client %s %s %s %s %d 0 n/a\n", wl, sink, role, rep, n }'
}

[ -z "$param" ] || [ -w "$param" ] || { echo "clients.sh: $param is not writable" >&2; exit 1; }
rep=1
while [ "$rep" -le "$reps" ]; do
	for wl in $have; do
		for s in $sinks; do
			for role in $(roles "${param:+1}" "$rep"); do
				sample "$role" "$wl" "$s" "$rep"
			done
		done
	done
	echo "[$rep/$reps] clients ($have) into $sinks" >&2
	rep=$((rep + 1))
done
