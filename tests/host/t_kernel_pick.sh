#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_kernel_pick.sh - the harness's choice of a kernel version (tests/vm/kernel-pick.sh) against fake apt archives published out of order; TAP.
#
# No network: each case writes Packages and Release files of a file:
# archive (bookworm + bookworm-security for the host's ids, sid +
# experimental for the sid chroot's), runs the real apt-get update and
# apt-cache on them (FZ_APT_FAKE: apt's Dir option) and checks what fz_pick
# takes: the version, the Debian guest's image package, and that its reason
# names what the newer versions lacked.  The packages are stanzas only;
# nothing is downloaded or installed.
#
# usage: tests/host/t_kernel_pick.sh    Exit status: 0 when every test passed.  ~5 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export FZ_CACHE=$T/cache
# the run's debug kernels, as make check's default (the caller's may differ)
export FZ_DEBUG_KERNELS='6.12-debug 7-debug'
# shellcheck source=SCRIPTDIR/../vm/lib.sh
source "$REPO/tests/vm/lib.sh"
# the Debian guest's kernel id, as debian-guest.sh picks it (on the trixie lists)
export FZ_PICK_GUEST_ID=6.12
# shellcheck source=SCRIPTDIR/../vm/kernel-pick.sh
source "$REPO/tests/vm/kernel-pick.sh"
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"

# pkg NAME [DEPENDS]: one Packages stanza.
pkg() {
	printf 'Package: %s\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\n' "$1"
	[[ -z ${2:-} ]] || printf 'Depends: %s\n' "$2"
	printf 'Filename: pool/%s_1_amd64.deb\nSize: 1\nDescription: stand-in\n\n' "$1"
}

# kernel VER [WHAT...]: a kernel's packages; WHAT (default "headers common
# unsigned signed") picks which: headers, common (what the headers depend
# on), unsigned, signed, binary (+ modules), source (linux-source-SERIES).
kernel() {
	local v=$1 w
	shift
	(($#)) || set -- headers common unsigned signed
	for w in "$@"; do
		case $w in
		headers) pkg "linux-headers-$v" "linux-headers-${v%-amd64}-common" ;;
		common) pkg "linux-headers-${v%-amd64}-common" ;;
		unsigned) pkg "linux-image-$v-unsigned" ;;
		signed) pkg "linux-image-$v" ;;
		binary) pkg "linux-binary-$v" && pkg "linux-modules-$v" ;;
		source) [[ $v =~ ^([0-9]+\.[0-9]+) ]] && pkg "linux-source-${BASH_REMATCH[1]}" ;;
		esac
	done
}

# archive WHERE SUITE...: publish $T/in/SUITE as SUITE's Packages in a
# file: archive for WHERE (host or sid), and apt-get update there.
archive() {
	local where=$1 s d f
	shift
	d=$T/fake/$where
	rm -rf "$d" "$T/repo-$where"
	mkdir -p "$d/etc/apt/preferences.d" "$d/etc/apt/apt.conf.d" "$d/var/lib/apt/lists/partial" \
		"$d/var/lib/dpkg" "$d/var/cache/apt/archives/partial"
	: >"$d/var/lib/dpkg/status"
	: >"$d/etc/apt/sources.list"
	for s in "$@"; do
		f=$T/repo-$where/dists/$s/main/binary-amd64/Packages
		mkdir -p "${f%/*}"
		cp "$T/in/$s" "$f"
		# experimental, as Debian's: NotAutomatic, ButAutomaticUpgrades
		{
			printf 'Suite: %s\nCodename: %s\nDate: %s\nComponents: main\nArchitectures: amd64\n' \
				"$s" "$s" "$(LC_ALL=C date -u -R)"
			[[ $s != experimental ]] || printf 'NotAutomatic: yes\nButAutomaticUpgrades: yes\n'
			printf 'SHA256:\n %s %s main/binary-amd64/Packages\n' \
				"$(sha256sum <"$f" | cut -d' ' -f1)" "$(stat -c %s "$f")"
		} >"$T/repo-$where/dists/$s/Release"
		echo "deb [trusted=yes] file:$T/repo-$where $s main" >>"$d/etc/apt/sources.list"
	done
	FZ_APT_FAKE=$T/fake fz_apt_q "$where" apt-get -qq update >"$T/update.log" 2>&1 ||
		{ cat "$T/update.log" >&2; return 1; }
}

# expect NAME WHERE ID VER IMAGE WHY-PATTERN: fz_pick takes VER, the guest
# image IMAGE ("-": none) and says a reason matching WHY-PATTERN.
expect() {
	local name=$1 where=$2 id=$3 ver=$4 img=$5 why=$6 out v i w
	out=$(FZ_APT_FAKE=$T/fake fz_pick "$where" "$id" 2>"$T/pick.err")
	IFS=$'\t' read -r v i w <<<"$out"
	if [[ $v == "$ver" && $i == "$img" && $w =~ $why ]]; then
		ok 0 "$name"
	else
		ok 1 "$name" "took '${v:-nothing}' guest '${i:-}' why '${w:-$(tail -n1 "$T/pick.err")}'; want $ver $img /$why/"
	fi
}

host_case() {	# host_case: bookworm from $T/in/bookworm, security from stdin
	cat >"$T/in/bookworm-security"
	archive host bookworm bookworm-security
}

mkdir -p "$T/in"
{
	kernel 6.1.0-40-amd64
	kernel 6.12.100+deb12-amd64
} >"$T/in/bookworm"

kernel 6.12.117+deb12-amd64 | host_case || exit 2
expect "everything published: the newest, the guest's signed image" host 6.12 \
	6.12.117+deb12-amd64 linux-image-6.12.117+deb12-amd64 '^newest;'

{ kernel 6.12.117+deb12-amd64; kernel 6.12.118+deb12-amd64 headers common unsigned; } | host_case
expect "signed image not yet published: the newest, the guest installs -unsigned" host 6.12 \
	6.12.118+deb12-amd64 linux-image-6.12.118+deb12-amd64-unsigned 'signed .* not published'

{ kernel 6.12.117+deb12-amd64; kernel 6.12.118+deb12-amd64 headers common signed; } | host_case
expect "unsigned image missing, signed there: the newest, the signed image" host 6.12 \
	6.12.118+deb12-amd64 linux-image-6.12.118+deb12-amd64 '^newest;'

{ kernel 6.12.117+deb12-amd64; kernel 6.12.118+deb12-amd64 headers common; } | host_case
expect "headers ahead of every image: the version before" host 6.12 \
	6.12.117+deb12-amd64 linux-image-6.12.117+deb12-amd64 '118.*no image package'

{ kernel 6.12.117+deb12-amd64; kernel 6.12.118+deb12-amd64 headers unsigned signed; } | host_case
expect "headers whose -common is not published: the version before" host 6.12 \
	6.12.117+deb12-amd64 linux-image-6.12.117+deb12-amd64 'linux-headers-6.12.118.* not installable'

{ kernel 6.1.0-41-amd64 headers common; kernel 6.12.117+deb12-amd64; } | host_case
expect "6.1 (headers only in the guest): headers ahead of the image, the version before" host 6.1 \
	6.1.0-40-amd64 - '6.1.0-41-amd64 no image package'

{ kernel 6.12.117+deb12-amd64 headers common; } | host_case
expect "a version in bookworm-security only, without an image: bookworm's" host 6.12 \
	6.12.100+deb12-amd64 linux-image-6.12.100+deb12-amd64 '117.*no image package'

# sid: 7.2 in sid, 7.3 in experimental only.
{ kernel 7.2.13+deb14-amd64 headers common binary source; } >"$T/in/sid"
{ kernel 7.3-amd64 headers common binary source; } >"$T/in/experimental"
archive sid sid experimental || exit 2
expect "7: a version in experimental only is not sid's kernel" sid 7 \
	7.2.13+deb14-amd64 - '^newer skipped: 7\.3-amd64 not in sid'
expect "newest: experimental's" sid newest 7.3-amd64 - '^newest$'

{ kernel 7.2.13+deb14-amd64 headers common binary source; kernel 7.3.1+deb14-amd64 headers common binary; } >"$T/in/sid"
{ kernel 7.3-amd64 headers common binary; } >"$T/in/experimental"
archive sid sid experimental || exit 2
expect "7: sid moved to 7.3 before linux-source-7.3: 7.2 while 7-debug is in the run" sid 7 \
	7.2.13+deb14-amd64 - 'no linux-source-7\.3 \(7-debug\)'
FZ_DEBUG_KERNELS=none expect "7: the same without 7-debug in the run: 7.3" sid 7 \
	7.3.1+deb14-amd64 - '^newest$'

{ kernel 7.2.13+deb14-amd64 headers common binary source; kernel 7.2.14+deb14-amd64 headers common source; pkg linux-binary-7.2.14+deb14-amd64; } >"$T/in/sid"
archive sid sid experimental || exit 2
expect "7: linux-binary without its linux-modules: the version before" sid 7 \
	7.2.13+deb14-amd64 - '7\.2\.14.*no image package'

{ kernel 6.12.118+deb12-amd64 headers common; } | host_case
: >"$T/in/bookworm"
{ kernel 6.12.118+deb12-amd64 headers common; } | host_case
if ! FZ_APT_FAKE=$T/fake fz_pick host 6.12 >/dev/null 2>"$T/pick.err" && grep -q 'no usable version' "$T/pick.err"; then
	ok 0 "nothing usable: fz_pick fails and says what each version lacked"
else
	ok 1 "nothing usable: fz_pick fails and says what each version lacked" "$(cat "$T/pick.err")"
fi

tap_done
