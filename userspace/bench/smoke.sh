#!/bin/sh
# smoke.sh - benchmark smoke test for `make check` (busybox sh in the guest).
#
# usage: smoke.sh [DIR]   (DIR holds fzbench and fio-jobs/; default: next to
#                          this script, else ../build and ../../fio-jobs)
# Runs every fio job file (its first job only, --section; SMOKE_ALL=1 runs all
# of them) for 250 ms per job (--runtime=250ms --time_based) against /dev/fastzero
# and /dev/zero, and fzbench --quick --json; checks only that
# the outputs are well formed (fio JSON has "jobs" and no job error; fzbench
# JSON has "results" and balanced braces) - never timings.  TAP on stdout.
# Env: FZ_DEV (default /dev/fastzero), FZ_REF (default /dev/zero),
#      SMOKE_RUNTIME (default 250ms: fio time units), SMOKE_ALL (default 0).
set -u

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here}
dev=${FZ_DEV:-/dev/fastzero}
ref=${FZ_REF:-/dev/zero}
rt=${SMOKE_RUNTIME:-250ms}
tmp=${TMPDIR:-/tmp}/fz-smoke.$$
n=0 fail=0

fzbench=$dir/fzbench
[ -x "$fzbench" ] || fzbench=$here/../build/fzbench
jobdir=$dir/fio-jobs
[ -d "$jobdir" ] || jobdir=$here/../../fio-jobs
mkdir -p "$tmp"

tap() {	# tap OK|FAIL NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = OK ]; then
		echo "ok $n - $2"
	else
		fail=$((fail + 1))
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || echo "# $3"
	fi
}

# fio prints error lines before the JSON document: look from the first "{".
fio_ok() {	# fio_ok JSONFILE
	sed -n '/^{/,$p' "$1" >"$1.doc"
	grep -q '"jobs"' "$1.doc" || return 1
	# every job must report error 0
	! grep '"error" :' "$1.doc" | grep -qv '"error" : 0,'
}

# braces balance and the keys we promise are there
json_ok() {	# json_ok FILE KEY...
	f=$1
	shift
	opens=$(tr -cd '{' <"$f" | wc -c)
	closes=$(tr -cd '}' <"$f" | wc -c)
	[ "$opens" -gt 0 ] && [ "$opens" = "$closes" ] || return 1
	for k in "$@"; do
		grep -q "\"$k\"" "$f" || return 1
	done
}

# first_section JOBFILE -> --section=NAME, or nothing with SMOKE_ALL=1
first_section() {
	[ "${SMOKE_ALL:-0}" = 1 ] && return 0
	sec=$(sed -n 's/^\[\(.*\)\]$/\1/p' "$1" | grep -v '^global$' | head -n 1)
	echo "--section=$sec"
}

set -- "$jobdir"/*.fio
njob=$#
echo "1..$((2 * njob + 1))"

if ! command -v fio >/dev/null 2>&1; then
	echo "# fio not found"
fi
for d in "$dev" "$ref"; do
	for j in "$jobdir"/*.fio; do
		name="fio $(basename "$j" .fio) on $d"
		out=$tmp/$(basename "$j" .fio)-$(basename "$d").json
		# shellcheck disable=SC2046 # first_section prints one word or none
		if ! fio --filename="$d" --time_based --runtime="$rt" $(first_section "$j") \
			--output-format=json "$j" >"$out" 2>"$out.err"; then
			tap FAIL "$name" "fio exit status $?: $(head -c 200 "$out.err")"
		elif fio_ok "$out"; then
			tap OK "$name"
		else
			tap FAIL "$name" "no \"jobs\" or a job error in the JSON"
		fi
	done
done

out=$tmp/fzbench.json
if ! "$fzbench" --dev "$dev" --ref "$ref" --quick --json >"$out" 2>"$out.err"; then
	tap FAIL "fzbench --quick --json" "exit status: $(tail -n 3 "$out.err")"
elif json_ok "$out" tool mode results median; then
	tap OK "fzbench --quick --json"
else
	tap FAIL "fzbench --quick --json" "malformed JSON"
fi

rm -rf "$tmp"
[ "$fail" = 0 ]
