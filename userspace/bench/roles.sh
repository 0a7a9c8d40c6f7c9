# roles.sh - the series of an interleaved run, shared by collect.sh, dd.sh and clients.sh (sourced; POSIX sh, busybox sh in the guest).
# shellcheck shell=sh
#
# Roles: A = the device, B = the reference, U = the device with fastzero's
# force_variant set to "unrolled" (/dev/zero's movq loop).

# roles WITH_U REP: the order of repetition REP (from 1), rotated every
# repetition so that no series always runs first: "A B", "B A", or with
# WITH_U=1 "A B U", "B U A", "U A B"
roles() {
	if [ "$1" = 1 ]; then
		case $((($2 - 1) % 3)) in
		0) echo "A B U" ;;
		1) echo "B U A" ;;
		*) echo "U A B" ;;
		esac
	elif [ $((($2 - 1) % 2)) = 0 ]; then
		echo "A B"
	else
		echo "B A"
	fi
}

# variant PARAM VALUE: write VALUE (auto, unrolled) to the force_variant
# file PARAM, or stop the script that asked, saying so
variant() {
	printf '%s\n' "$2" >"$1" || { echo "$(basename "$0"): cannot set $1 to $2" >&2; exit 1; }
}
