#!/bin/sh
# dd.sh - dd(1) read throughput of two devices, interleaved, median + spread.
#
# usage: dd.sh [-r REPS] [-t TOTAL] [-c MAXCOUNT] [-b "512 4K ..."] [-d DD] [-s]
#              [-u PARAM] DEV_A DEV_B
#   -r REPS      repetitions per (block size, device)        (default 5)
#   -t TOTAL     bytes per sample, e.g. 256M                  (default 256M)
#   -c MAXCOUNT  cap on dd's count= (bounds the small sizes)  (default 131072)
#   -b LIST      block sizes        (default "512 4K 64K 1M 4M 16M 64M")
#   -d DD        the dd to run: it must print GNU dd's "... bytes ... copied,
#                N s, X GB/s" line (busybox dd usually does not)  (default dd)
#   -s           print the summary table instead of the raw samples
#   -u PARAM     a third series, role U: DEV_A again with PARAM (fastzero's
#                force_variant file) set to "unrolled"; PARAM is set to
#                "auto" before every A sample and left at "auto"
# Raw output, one line per sample:  dd BS ROLE(A|B|U) DEV REP BYTES SECONDS GBPS
# Summary:  bs  A_GB/s  A_spread%  B_GB/s  B_spread%  ratio(A/B)
#           [U_GB/s  U_spread%  ratio(U/B)]
# The order of the roles rotates every repetition (A B U, B U A, U A B).
# GB/s = 1e9 bytes/s, computed from dd's byte count and seconds (not its
# rounded rate); spread = (max - min) / median.  POSIX sh: runs under bash
# on the host and busybox sh in the VM guest.
set -eu

reps=5 total=256M maxcount=131072 sizes="512 4K 64K 1M 4M 16M 64M" dd=dd summary=0
param=''

usage() {
	sed -n '4,16p' "$0" >&2
	exit 2
}

# to_bytes 4K -> 4096 (K, M, G are binary)
to_bytes() {
	case $1 in
	*[kK]) echo $((${1%?} * 1024)) ;;
	*M) echo $((${1%?} * 1048576)) ;;
	*G) echo $((${1%?} * 1073741824)) ;;
	*) echo $(($1)) ;;
	esac
}

# sample ROLE DEV BS REP: one dd run -> one raw line (GBPS "n/a" if dd failed).
# At least 4 blocks, so dd's first touch of its buffer is amortized a little.
sample() {
	nbytes=$(to_bytes "$3")
	count=$(($(to_bytes "$total") / nbytes))
	[ "$count" -ge 4 ] || count=4
	[ "$count" -le "$maxcount" ] || count=$maxcount
	out=$("$dd" if="$2" of=/dev/null bs="$nbytes" count="$count" 2>&1) || true
	printf '%s\n' "$out" | awk -v role="$1" -v bs="$3" -v dev="$2" -v rep="$4" '
		/copied/ {
			for (i = 2; i <= NF; i++)
				if ($i == "s," || $i == "seconds,")
					secs = $(i - 1)
			bytes = $1
		}
		END {
			if (secs > 0)
				printf "dd %s %s %s %s %s %s %.4f\n", bs, role, dev, rep, bytes, secs, bytes / secs / 1e9
			else
				printf "dd %s %s %s %s 0 0 n/a\n", bs, role, dev, rep
		}'
}

# summarize < raw lines
summarize() {
	awk -v a=A -v b=B -v u="${param:+U}" -v order="$sizes" '
		function stat(key,   n, i, j, t, v, med) {
			n = cnt[key]
			if (!n)
				return "n/a n/a"
			for (i = 1; i <= n; i++)
				v[i] = val[key, i]
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
				}
			med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			mid[key] = med
			return sprintf("%.3f %.1f", med, med > 0 ? 100 * (v[n] - v[1]) / med : 0)
		}
		$1 == "dd" && $8 != "n/a" {
			k = $2 SUBSEP $3
			val[k, ++cnt[k]] = $8
		}
		END {
			printf "%-6s %10s %8s %10s %8s %7s", "bs", "A_GB/s", "spread%", "B_GB/s", "spread%", "ratio"
			if (u != "")
				printf " %10s %8s %7s", "U_GB/s", "spread%", "ratio"
			printf "\n"
			n = split(order, bss, " ")
			for (i = 1; i <= n; i++) {
				sa = stat(bss[i] SUBSEP a)
				sb = stat(bss[i] SUBSEP b)
				ra = mid[bss[i] SUBSEP a]; rb = mid[bss[i] SUBSEP b]
				split(sa, pa, " "); split(sb, pb, " ")
				printf "%-6s %10s %8s %10s %8s %7s", bss[i], pa[1], pa[2], pb[1], pb[2],
					(ra > 0 && rb > 0) ? sprintf("%.3f", ra / rb) : "n/a"
				if (u != "") {
					split(stat(bss[i] SUBSEP u), pu, " ")
					ru = mid[bss[i] SUBSEP u]
					printf " %10s %8s %7s", pu[1], pu[2],
						(ru > 0 && rb > 0) ? sprintf("%.3f", ru / rb) : "n/a"
				}
				printf "\n"
			}
		}'
}

while getopts r:t:c:b:d:su:h opt; do
	case $opt in
	r) reps=$OPTARG ;;
	t) total=$OPTARG ;;
	c) maxcount=$OPTARG ;;
	b) sizes=$OPTARG ;;
	d) dd=$OPTARG ;;
	s) summary=1 ;;
	u) param=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
dev_a=$1 dev_b=$2

# shellcheck source=SCRIPTDIR/roles.sh
. "$(dirname "$0")/roles.sh"

# one ROLE BS REP
one() {
	case $1 in
	A)
		[ -z "$param" ] || variant "$param" auto
		sample A "$dev_a" "$2" "$3"
		;;
	B) sample B "$dev_b" "$2" "$3" ;;
	U)
		variant "$param" unrolled
		sample U "$dev_a" "$2" "$3"
		variant "$param" auto
		;;
	esac
}

run() {
	[ -z "$param" ] || [ -w "$param" ] || { echo "dd.sh: $param is not writable" >&2; exit 1; }
	rep=1
	while [ "$rep" -le "$reps" ]; do
		for bs in $sizes; do
			for role in $(roles "${param:+1}" "$rep"); do
				one "$role" "$bs" "$rep"
			done
		done
		echo "[$rep/$reps] dd sweep ($sizes)" >&2
		rep=$((rep + 1))
	done
}

if [ "$summary" = 1 ]; then
	echo "# dd.sh: A=$dev_a B=$dev_b${param:+ U=$dev_a with $param=unrolled} reps=$reps total=$total"
	run | summarize
else
	run
fi
