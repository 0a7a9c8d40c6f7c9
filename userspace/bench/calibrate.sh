#!/usr/bin/env bash
# calibrate.sh - what `make calibrate` runs: this machine's erms_threshold and nt_threshold, measured.
#
# clearbench --sections calibrate times the driver's own loops
# (driver/arch/x86/clear_loops.S) with the driver's extent policy (driver/policy.h):
# (a) the length from which rep stosb stays ahead of the unrolled loop,
# (b) the read size from which non-temporal stores beat one rep stos per
# extent, with 32 MiB extents and with one call per read; it prints them
# beside the values the driver derives from the CPU at load, and the
# modprobe.d line.  A value whose deciding row is within its spread (the
# medians differ by less than the two spreads added: the table's "?") is
# not advised: the line has only the others, or there is none.  Mode:
# native userspace, this CPU.
#
# Env: QUICK=1              short run (reads up to 256 MiB, 3 repetitions)
#      CALIBRATE_INSTALL=1  as root, write the line to
#                           /etc/modprobe.d/fastzero-calibrated.conf
#      FZ_RESULTS           where the CSV goes (default results/)
#      CLEARBENCH           the binary (default userspace/build/clearbench)
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
US_DIR=$(cd "$BENCH_DIR/.." && pwd)
REPO=$(cd "$US_DIR/.." && pwd)
CLEARBENCH=${CLEARBENCH:-$US_DIR/build/clearbench}
CONF=/etc/modprobe.d/fastzero-calibrated.conf
TABLE=

main() {
	local args=(--sections calibrate) out line noise host
	[[ ${QUICK:-0} != 1 ]] || args+=(--quick)
	[[ -x $CLEARBENCH ]] || make -s -C "$US_DIR" "$CLEARBENCH" >&2
	host=$(hostname -s 2>/dev/null || uname -n)
	out=${FZ_RESULTS:-$REPO/results}/$(date +%Y%m%d-%H%M%S)-$host-$(uname -r)-native-calibrate.csv
	mkdir -p "$(dirname "$out")"
	TABLE=$(mktemp)
	trap 'rm -f "$TABLE"' EXIT
	"$CLEARBENCH" "${args[@]}" --csv "$out" "$@" | tee "$TABLE"
	line=$(sed -n 's/^=> modprobe: //p' "$TABLE")
	noise=$(sed -n 's/^=> no_advice: //p' "$TABLE")
	[[ -n $line || -n $noise ]] || { echo "calibrate: no result line" >&2; exit 1; }
	echo
	echo "# mode: native userspace, $(sed -n 's/^# cpu: //p' "$TABLE"); csv: $out"
	[[ -z $noise ]] || echo "# no advice for $noise"
	if [[ -z $line ]]; then
		[[ ${CALIBRATE_INSTALL:-0} != 1 ]] || { echo "calibrate: CALIBRATE_INSTALL=1: nothing to write" >&2; exit 1; }
		return 0
	fi
	echo "# for /etc/modprobe.d (applies at the next load of fastzero):"
	echo "$line"
	[[ ${CALIBRATE_INSTALL:-0} == 1 ]] || return 0
	[[ $EUID == 0 ]] || { echo "calibrate: CALIBRATE_INSTALL=1 writes $CONF: run as root" >&2; exit 1; }
	printf '# %s - written by make calibrate on %s (%s)\n%s\n' \
		"$(basename "$CONF")" "$(date -Is)" "$host" "$line" >"$CONF"
	echo "# written to $CONF: modprobe -r fastzero && modprobe fastzero"
}

main "$@"
