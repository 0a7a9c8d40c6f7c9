#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_upstream.sh - the upstream stack signs for nobody, and upstream/series.sh signs with the sender's identity or refuses; TAP.
#
# No network, no kernel source: the refusals come before anything is
# fetched.  And upstream/measure-dev-zero.sh, run once on this host.  Generating the signed patches needs a kernel tree; make check
# does that in the upstream proof (tests/vm/upstream-proof.sh) with a test
# identity.
#
# usage: tests/host/t_upstream.sh    Exit status: 0 when every test passed.  ~20 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# No person's name in the committed stack: the messages carry no trailer
# that signs, and no generated patch is tracked.
signed=$(grep -lE '^(Signed-off-by|From|Reviewed-by|Acked-by|Tested-by):' \
	"$REPO"/upstream/series/*/*/msg "$REPO"/upstream/cover/*.txt 2>/dev/null)
ok "$([[ -z $signed ]]; echo $?)" "the stack's messages sign for nobody" "$signed"
tracked=$(git -C "$REPO" ls-files -- '*.patch' 2>/dev/null)
ok "$([[ -z $tracked ]]; echo $?)" "no generated patch file is committed" "$tracked"

# series IDENT: series.sh with no git identity anywhere (an empty
# repository's config, no global or system one) and UPSTREAM_IDENT=IDENT.
series() {
	git init -q --bare "$T/empty.git"
	UPSTREAM_IDENT=$1 GIT_DIR=$T/empty.git GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
		FZ_CACHE=$T/cache "$REPO/upstream/series.sh" >"$T/out" 2>&1
}

series ''
rc=$?
ok "$((rc == 1 ? 0 : 1))" "no identity: series.sh stops (status $rc)"
grep -q 'no sender identity' "$T/out"
ok $? "... and says why" "$(head -n 2 "$T/out")"
! grep -q 'fetching' "$T/out"
ok $? "... before anything is fetched"

series 'nobody'
rc=$?
ok "$((rc == 1 ? 0 : 1))" "UPSTREAM_IDENT without an address: refused (status $rc)"

# The testers' script, one run on this host's kernel: a number in every
# row it promises (stress-ng is a host dependency of make check).
"$REPO/upstream/measure-dev-zero.sh" -r 1 -o "$T/m.csv" >/dev/null 2>"$T/m.err"
ok $? "measure-dev-zero.sh -r 1 runs" "$(tail -n 2 "$T/m.err")"
for row in splice,1 dd,4K dd,1M dd,64M first_touch,1G; do
	grep -qE "^[^,]+,$row,1,[0-9.]+,[a-z_]+$" "$T/m.csv"
	ok $? "... its CSV has a number for $row"
done
tap_done
