#!/usr/bin/env bash
# shellcheck disable=SC2016 # the single-quoted scripts run in fastzero-run's sh
# SPDX-License-Identifier: GPL-2.0
# t_fastzero_run.sh - fastzero-run on the host, with a stand-in for /dev/fastzero; TAP.
#
# The host need not load the module: FASTZERO_DEV points fastzero-run at
# another character device whose behaviour tells it apart from /dev/zero,
# /dev/null (reads return nothing) or /dev/full (writes fail, ENOSPC), and
# each test reads /dev/zero inside and outside.  Covered: the stand-in is
# /dev/zero inside, the host's /dev/zero untouched during (another process,
# the mount table) and after, exit statuses passed through (0, 3, 255,
# 128+SIGTERM, 126, 127) and fastzero-run's own (64, 69, 77), -u USER,
# an unprivileged user (user namespaces: run, or the refusal checked), and
# the systemd drop-in: printed, installed into a scratch directory, parsed
# by systemd-analyze verify (systemd's own parser, no running systemd
# needed), removed.  Root for the namespace tests (they fail without it).
#
# usage: tests/host/t_fastzero_run.sh   (FASTZERO_RUN: the fastzero-run to
#        test, default userspace/fastzero-run; /usr/bin/fastzero-run for
#        the installed one)
# Exit status: 0 when every test passed.  ~1 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FZR=${FASTZERO_RUN:-$REPO/userspace/fastzero-run}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"
# a step that cannot run here (not root, a tool missing) is a failure
cannot() { ok 1 "$1" "$2"; }
is() {	# is GOT WANT NAME
	if [[ $1 == "$2" ]]; then ok 0 "$3"; else ok 1 "$3" "got '$1', want '$2'"; fi
}

zeros16=$(head -c 16 /dev/zero | od -An -tx1 | tr -d ' \n')
host_zero() {	# the host's /dev/zero as this process sees it: 16 bytes, hex
	head -c 16 /dev/zero | od -An -tx1 | tr -d ' \n'
}
zero_mounts() {	# zero_mounts MOUNTINFO: mounts on /dev/zero in it
	awk '$5 == "/dev/zero"' "$1" | wc -l
}

is "$zeros16" 00000000000000000000000000000000 "the host's /dev/zero reads zeros before"
base_mounts=$(zero_mounts /proc/self/mountinfo)

# --- fastzero-run's own errors (any user) --------------------------------

out=$(FASTZERO_DEV=$T/no-such-device "$FZR" true 2>&1)
rc=$?
is "$rc" 69 "module missing: exit 69"
[[ $out == *"module is not loaded"* ]]
ok $? "module missing: the message says the module is not loaded" "$out"

: >"$T/plain"
FASTZERO_DEV=$T/plain "$FZR" true 2>/dev/null
is $? 69 "not a character device: exit 69"

"$FZR" 2>/dev/null
is $? 64 "no command: exit 64"
"$FZR" --no-such-option true 2>/dev/null
is $? 64 "unknown option: exit 64"

v=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$REPO/dkms.conf")
out=$("$FZR" --version)
is "$out" "fastzero-run (fastzero) $v" "--version is dkms.conf's PACKAGE_VERSION"
"$FZR" --help | grep -q -- '--install-dropin'
ok $? "--help lists --install-dropin"

# --- as root: the mount namespace ------------------------------------------

if ((EUID != 0)); then
	for t in "stand-in read" "host untouched during" "exit statuses" "-u USER" "unprivileged"; do
		cannot "$t" "needs root (make check runs as root)"
	done
else
	out=$(FASTZERO_DEV=/dev/null "$FZR" sh -c 'head -c 16 /dev/zero | od -An -tx1 | tr -d " \n"; echo "|$(stat -Lc %t:%T /dev/zero)"')
	is "$out" "|$(stat -Lc %t:%T /dev/null)" "stand-in /dev/null: /dev/zero inside reads nothing and is 1:3"
	out=$(FASTZERO_DEV=/dev/full "$FZR" sh -c 'head -c 16 /dev/zero | od -An -tx1 | tr -d " \n"
		if printf x 2>/dev/null >/dev/zero; then echo "|written"; else echo "|ENOSPC"; fi')
	is "$out" "$zeros16|ENOSPC" "stand-in /dev/full: reads zeros, a write to /dev/zero fails as /dev/full's"
	out=$(FASTZERO_DEV=/dev/full "$FZR" dd if=/dev/zero of=/dev/null bs=4k count=4 2>&1 | head -n 1)
	is "$out" "4+0 records in" "dd if=/dev/zero through the bind mount"

	# during: the command waits on a file; meanwhile this process checks
	mkfifo "$T/started"
	FASTZERO_DEV=/dev/null "$FZR" sh -c 'echo $$ >"$1"; while [ ! -e "$2" ]; do sleep 0.02; done
		head -c 16 /dev/zero | wc -c' sh "$T/started" "$T/go" >"$T/during.out" 2>&1 &
	bg=$!
	read -r pid <"$T/started"
	is "$(host_zero)" "$zeros16" "during: another process reads zeros from /dev/zero"
	is "$(zero_mounts /proc/self/mountinfo)" "$base_mounts" "during: no mount on /dev/zero in the host's table"
	is "$(zero_mounts "/proc/$pid/mountinfo")" "$((base_mounts + 1))" "during: the command's table has the bind mount"
	[[ $(readlink "/proc/$pid/ns/mnt") != "$(readlink /proc/self/ns/mnt)" ]]
	ok $? "during: the command is in another mount namespace"
	touch "$T/go"
	wait "$bg"
	is $? 0 "during: the command ran to the end"
	is "$(tr -d ' ' <"$T/during.out")" 0 "during: the command read the stand-in"

	for want in 0 3 255; do
		FASTZERO_DEV=/dev/null "$FZR" sh -c "exit $want"
		is $? "$want" "exit status $want passed through"
	done
	{ FASTZERO_DEV=/dev/null "$FZR" sh -c 'kill -TERM $$'; } 2>/dev/null
	is $? 143 "killed by SIGTERM: 128+15"
	FASTZERO_DEV=/dev/null "$FZR" "$T/no-such-command" 2>/dev/null
	is $? 127 "command not found: 127"
	FASTZERO_DEV=/dev/null "$FZR" "$T/plain" 2>/dev/null
	is $? 126 "command not executable: 126"

	out=$(FASTZERO_DEV=/dev/null "$FZR" -u nobody sh -c 'echo "$(id -u) $(head -c 16 /dev/zero | wc -c)"')
	is "$out" "$(id -u nobody) 0" "-u nobody: runs as nobody, reads the stand-in"

	# unprivileged: a user namespace, or a clear refusal
	if ! command -v setpriv >/dev/null; then
		cannot "unprivileged" "no setpriv (util-linux)"
	else
		nb=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
		# a copy nobody can run: the checkout may sit where nobody
		# cannot look (a clone under /root, mode 0700)
		chmod 755 "$T"
		install -m 755 "$FZR" "$T/fastzero-run.nobody"
		if "${nb[@]}" unshare --user --map-root-user --mount true 2>/dev/null; then
			out=$(cd / && FASTZERO_DEV=/dev/null "${nb[@]}" "$T/fastzero-run.nobody" sh -c \
				'echo "$(id -u) $(head -c 16 /dev/zero | wc -c)"; umount /dev/zero 2>/dev/null && echo unmounted; exit 7')
			rc=$?
			is "$out|$rc" "$(id -u nobody) 0|7" "unprivileged (user namespace): runs as the caller, reads the stand-in, cannot unmount it, status passed"
		else
			out=$(cd / && FASTZERO_DEV=/dev/null "${nb[@]}" "$T/fastzero-run.nobody" true 2>&1)
			rc=$?
			is "$rc" 77 "unprivileged, user namespaces refused: exit 77 ($out)"
		fi
	fi
fi

is "$(host_zero)" "$zeros16" "after: the host's /dev/zero reads zeros"
is "$(stat -Lc %t:%T /dev/zero)" 1:5 "after: /dev/zero is still 1:5"
is "$(zero_mounts /proc/self/mountinfo)" "$base_mounts" "after: no mount left on /dev/zero"

# --- the systemd drop-in ---------------------------------------------------

out=$(FASTZERO_SYSTEMD_DIR=$T/systemd "$FZR" --print-dropin)
grep -qx 'BindReadOnlyPaths=-/dev/fastzero:/dev/zero' <<<"$out" &&
	grep -qx '#DeviceAllow=/dev/fastzero rw' <<<"$out"
ok $? "--print-dropin: BindReadOnlyPaths=-/dev/fastzero:/dev/zero, DeviceAllow commented out"

mkdir -p "$T/systemd"
printf '[Unit]\nDescription=fastzero-run test\n[Service]\nType=oneshot\nExecStart=/bin/true\n' \
	>"$T/systemd/fztest.service"
out=$(FASTZERO_DEV=/dev/null FASTZERO_SYSTEMD_DIR=$T/systemd "$FZR" --install-dropin fztest 2>&1)
[[ -f $T/systemd/fztest.service.d/fastzero.conf ]]
ok $? "--install-dropin fztest: writes fztest.service.d/fastzero.conf" "$out"
if command -v systemd-analyze >/dev/null; then
	out=$(SYSTEMD_UNIT_PATH=$T/systemd: systemd-analyze verify "$T/systemd/fztest.service" 2>&1)
	rc=$?
	! grep -i -e 'unknown' -e 'invalid' -e 'failed' -e 'ignoring' <<<"$out" >/dev/null && ((rc == 0))
	ok $? "systemd-analyze verify: the drop-in parses without a warning" "rc $rc: $out"
	# and it did read the drop-in: a bad key in it is reported
	echo 'NoSuchKey=1' >>"$T/systemd/fztest.service.d/fastzero.conf"
	out=$(SYSTEMD_UNIT_PATH=$T/systemd: systemd-analyze verify "$T/systemd/fztest.service" 2>&1)
	grep -q "fastzero.conf.*NoSuchKey" <<<"$out"
	ok $? "systemd-analyze verify reads the drop-in (a bad key in it is reported)" "$out"
else
	cannot "systemd-analyze verify" "no systemd-analyze (systemd)"
fi
FASTZERO_SYSTEMD_DIR=$T/systemd "$FZR" --remove-dropin fztest >/dev/null 2>&1
[[ ! -e $T/systemd/fztest.service.d ]]
ok $? "--remove-dropin fztest: the file and its directory are gone"

tap_done
