#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_nohistory.sh: tests/nohistory.sh (make lint) refuses issue numbers and work history, and passes plain prose.
set -uo pipefail
# shellcheck source=SCRIPTDIR/tap.sh
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
CHECK="$(dirname "${BASH_SOURCE[0]}")/../nohistory.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refused TEXT: the checker must report TEXT.
refused() {
	printf '/* %s */\n' "$1" >"$tmp/f.c"
	"$CHECK" "$tmp/f.c" >/dev/null
	ok "$((!$?))" "refused: $1"
}
# The numbers are put together here, so that this file names none itself.
num=$((20 + 7))
refused "the cold stores (issue $num)"
refused "Issue #$num's targets"
refused "fixed in (#$num)"
refused "results/README-issue$num-stores-native.txt"
refused "found by review $((num - 24))"
prev=previous
refused "an earlier run, $prev session"
printf '%s\n' 'Reads clear in extents sized in time; see docs/design-read.md.' \
	'An issue with this CPU: 27 bytes.' >"$tmp/ok.md"
"$CHECK" "$tmp/ok.md" >/dev/null
ok $? "plain prose passes"
tap_done
