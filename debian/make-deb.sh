#!/usr/bin/env bash
# make-deb.sh - what `make deb` runs: the fastzero-dkms and fastzero-tools .debs, then lintian.
#
# Builds in a copy of the tree (build/deb/src/fastzero-<version>/: the
# tracked and untracked-but-not-ignored files, so no build output of the
# tree gets in) whose debian/changelog it writes: the version is dkms.conf's
# PACKAGE_VERSION, the one place it is kept (driver/Kbuild, the Makefile and
# debian/rules read it too), so no version is written twice by hand and the
# tree itself stays clean.  dpkg-buildpackage -us -uc -b there; the .debs,
# .buildinfo and .changes go to build/deb/ (FZ_DEB_OUT), with build.log and
# lintian.txt.  lintian -I (errors, warnings and info) runs on every .deb;
# an error fails the build.  As root, installs build-essential, debhelper,
# dh-dkms, help2man and lintian when missing.  FZ_DEB_VERSION=V packages the
# tree as version V instead (written into the copy's dkms.conf): the Debian
# guest builds two versions to test an upgrade.
#
# FZ_DEB_ARCH=arm64 cross-builds fastzero-tools for arm64 (any architecture
# of its Architecture field; default: this machine's): dpkg-buildpackage -a
# arm64 -Pcross,nocheck -B, the architecture-dependent package only
# (fastzero-dkms is "all", the native build's), into build/deb-arm64/ by
# default, lintian as above.  It needs the cross compiler and the arm64 libc
# (gcc-aarch64-linux-gnu, libc6-dev:arm64), which root gets installed when
# dpkg already has the architecture (dpkg --add-architecture arm64 and apt-get
# update are left to the administrator).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_ARCH=$(dpkg --print-architecture)
ARCH=${FZ_DEB_ARCH:-$BUILD_ARCH}
OUT=${FZ_DEB_OUT:-$REPO/build/deb}
# a cross build keeps out of the native packages' directory
[[ -n ${FZ_DEB_OUT:-} || $ARCH == "$BUILD_ARCH" ]] || OUT=$REPO/build/deb-$ARCH
PKGS=(build-essential debhelper dh-dkms help2man lintian)

say() { printf '[deb] %s\n' "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}

need_pkgs() {
	local p missing=() lock=${FZ_CACHE:-/var/cache/fastzero}/locks/apt.lock
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	((EUID == 0)) || die "missing ${missing[*]}: run make deb as root, or apt install ${missing[*]}"
	[[ $ARCH == "$BUILD_ARCH" ]] || dpkg --print-foreign-architectures | grep -qx "$ARCH" ||
		die "missing ${missing[*]}: dpkg --add-architecture $ARCH && apt-get update, then make deb again"
	say "installing ${missing[*]}"
	# the test harness installs packages too: take its apt lock when it has one
	if [[ -d ${lock%/*} ]]; then exec 9>"$lock" && flock 9; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get update -qq >&2 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
	if [[ -d ${lock%/*} ]]; then exec 9>&-; fi
}

copy_tree() {	# copy_tree DEST
	if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
			tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$1"
	else	# a tarball: everything but build outputs
		tar -C "$REPO" --exclude=./build --exclude=./results --exclude='*.o' --exclude='*.ko' \
			--exclude='*.cmd' --exclude='*.mod' --exclude='*.mod.c' --exclude=./userspace/build \
			--exclude=./tests/suite/out -cf - . | tar -xf - -C "$1"
	fi
}

changelog() {	# changelog VERSION: debian/changelog on stdout
	local rev date maint
	rev=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo 'a tree without git')
	# the last commit's date: the same tree gives the same packages
	date=$(git -C "$REPO" log -1 --format=%cD 2>/dev/null || date -R)
	maint=$(sed -n 's/^Maintainer: //p' "$REPO/debian/control")
	cat <<CHANGELOG
fastzero ($1) unstable; urgency=medium

  * fastzero $1, from git $rev, packaged by make deb.
    This entry is generated: the version is dkms.conf's PACKAGE_VERSION.

 -- $maint  $date
CHANGELOG
}

main() {
	local version src f build=(-b) dbo=()
	version=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$REPO/dkms.conf")
	[[ -n $version ]] || die "no PACKAGE_VERSION in dkms.conf"
	[[ ${FZ_DEB_VERSION:-$version} =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
		die "FZ_DEB_VERSION '$FZ_DEB_VERSION' is not a Debian version"
	# a cross build: the host architecture's compiler and libc (dpkg-shlibdeps
	# reads the libc's symbols), not all of crossbuild-essential (g++)
	if [[ $ARCH != "$BUILD_ARCH" ]]; then
		sed -n '/^Package: fastzero-tools$/,/^$/s/^Architecture: //p' "$REPO/debian/control" |
			grep -qw -- "$ARCH" || die "FZ_DEB_ARCH '$ARCH' is not an architecture of fastzero-tools"
		PKGS+=("gcc-$(dpkg-architecture -a "$ARCH" -qDEB_HOST_GNU_TYPE 2>/dev/null)" "libc6-dev:$ARCH")
		# the cross and nocheck profiles, and nocheck as an option too, as
		# sbuild cross-builds: no test runs host binaries (dh warns without)
		build=(-a "$ARCH" "-Pcross,nocheck" -B)
		dbo=("DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }nocheck")
	fi
	need_pkgs
	rm -rf "$OUT"
	src=$OUT/src/fastzero-${FZ_DEB_VERSION:-$version}
	mkdir -p "$src"
	copy_tree "$src"
	if [[ -n ${FZ_DEB_VERSION:-} && $FZ_DEB_VERSION != "$version" ]]; then
		# a test package (the Debian guest's upgrade): the copy's one source
		sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$FZ_DEB_VERSION\"/" "$src/dkms.conf"
		version=$FZ_DEB_VERSION
	fi
	changelog "$version" >"$src/debian/changelog"
	say "dpkg-buildpackage -us -uc ${build[*]} in $src (log: $OUT/build.log)"
	if ! (cd "$src" && env "${dbo[@]}" nice dpkg-buildpackage -us -uc "${build[@]}") >"$OUT/build.log" 2>&1; then
		tail -n 30 "$OUT/build.log" >&2
		die "dpkg-buildpackage failed, see $OUT/build.log"
	fi
	for f in "$OUT"/src/*.deb "$OUT"/src/*.buildinfo "$OUT"/src/*.changes; do
		[[ -e $f ]] && mv "$f" "$OUT/"
	done
	# FZ_DEB_KEEP_SRC=1: the copy stays, with its changelog (autopkgtest
	# tests the packages from a source tree: tests/vm/sid-debs.sh)
	[[ -n ${FZ_DEB_KEEP_SRC:-} ]] || rm -rf "$OUT/src"
	say "lintian -I on $(cd "$OUT" && echo ./*.deb)"
	lintian -I --tag-display-limit 0 "$OUT"/*.deb 2>&1 |
		grep -v '^running with root privileges is not recommended!$' >"$OUT/lintian.txt" || true
	if [[ -s $OUT/lintian.txt ]]; then sed 's/^/  /' "$OUT/lintian.txt" >&2; else say "lintian: no tags"; fi
	grep -q '^E: ' "$OUT/lintian.txt" && die "lintian reported errors (see $OUT/lintian.txt)"
	say "done:"
	ls -l "$OUT"/*.deb >&2
}

main "$@"
