#!/usr/bin/env bash
# sid-debs.sh: the Debian packages built, lintian-checked, installed and DKMS-built for sid's kernel (id 7) in the harness's sid chroot; TAP.
#
# Usage: tests/vm/sid-debs.sh   (no VM: the chroot check.sh keeps for the
#        sid kernels, $FZ_CACHE/sid/root)
# The checkout (git's tracked and untracked-not-ignored files) is copied to
# /fzdebs/tree in the chroot, debian/make-deb.sh runs there with sid's
# debhelper, dh-dkms and lintian (an error fails it), apt installs both
# .debs with their dependencies as sid resolves them, DKMS builds fastzero
# for the headers of kernel id 7 (dkms install -k), the module's vermagic is
# that kernel's, and that module is kept as $FZ_CACHE/sid/debs/dkms-KVER.ko:
# check.sh boots it (kernel 7's first CPU model) instead of a tree build.
# Then Debian's own test of -dkms packages, autopkgtest-pkg-dkms (autodep8's
# dkms-autopkgtest: DKMS builds and installs the package for every kernel
# whose headers are installed, 7 and newest here), runs through autopkgtest
# with the null virtualisation server in the chroot; and apt purge leaves
# DKMS with nothing.  For arm64: DKMS builds the checkout for kernel id
# 7-arm64's headers (-a aarch64, cross), and fastzero-tools is cross-built
# (arm64_tools).  Every step prints "ok - NAME" or "not ok - NAME #
# DETAIL"; logs in $FZ_CACHE/sid/debs/.
set -uo pipefail
# shellcheck source=kernels.sh
source "$(dirname "${BASH_SOURCE[0]}")/kernels.sh"
# kernels.sh sets -e for itself: here a failed check is a "not ok" line
set +e

SD_PKGS=(build-essential debhelper dh-dkms help2man lintian dkms autopkgtest autodep8)
# The arm64 cross build's own: the cross compiler and arm64's libc by
# multiarch (what dpkg-buildpackage -a arm64 checks for, not all of
# crossbuild-essential-arm64: no g++), and qemu-user to run its fzbench.
SD_A64_PKGS=(gcc-aarch64-linux-gnu libc6-dev:arm64 qemu-user)
SD_IN=/fzdebs	# in the chroot
FAILED=0

tap() {	# tap 0|1 NAME [DETAIL]
	if [[ $1 == 0 ]]; then echo "ok - $2"; else echo "not ok - $2${3:+ # $3}"; FAILED=1; fi
}

# step NAME LOG CMD...: CMD in the chroot (under its lock), its output to LOG.
step() {
	local name=$1 log=$2
	shift 2
	if fz_sid_run "$@" >"$log" 2>&1; then
		tap 0 "$name"
	else
		tap 1 "$name" "log: $log: $(grep -m1 -E '^(E|dpkg|Error|\[deb\] error):' "$log" || tail -n1 "$log")"
		return 1
	fi
}

# keep_module KVER DST: DKMS's module for KVER out of the chroot, uncompressed
# (the guest's busybox insmod reads plain ELF).
keep_module() {
	local f
	f=$(compgen -G "$FZ_SID_ROOT/lib/modules/$1/updates/dkms/fastzero.ko*" | head -n1) || return 1
	case $f in
	*.xz) xz -dc "$f" >"$2" ;;
	*.zst) zstd -qdc "$f" >"$2" ;;
	*.gz) gzip -dc "$f" >"$2" ;;
	*) cp "$f" "$2" ;;
	esac && [[ -s $2 ]]
}

# checkout_dkms KVER VER: the README's DKMS from the checkout (dkms install .,
# for KVER: the chroot runs the host's kernel, which has no headers), what
# DKMS made of it, dkms.conf's BUILD_EXCLUSIVE, and make dkms-uninstall.
checkout_dkms() {
	local kver=$1 ver=$2 logs=$FZ_CACHE/sid/debs out
	step "sid: dkms install . -k $kver (DKMS from the checkout)" "$logs/checkout-dkms.log" \
		sh -c "cd $SD_IN/tree && dkms install . -k $kver" || return 0
	out=$(fz_sid_run dkms status fastzero 2>&1) || true
	[[ $out == *"fastzero/$ver, $kver, x86_64: installed"* ]]
	tap $? "sid: dkms status: fastzero/$ver installed for $kver" "dkms status: $out"
	out=$(fz_sid_run sh -c "modinfo -F signer /lib/modules/$kver/updates/dkms/fastzero.ko*" 2>&1) || true
	[[ -n $out ]] && fz_sid_run test -f /var/lib/dkms/mok.pub
	tap $? "sid: DKMS signed it with its MOK key (signer: $out)"
	checkout_dkms_arm64 "$ver"
	for out in "-k 5.10.0-30-amd64" "-k $kver -a riscv64"; do
		# shellcheck disable=SC2086 # the options, split
		! fz_sid_run dkms build "fastzero/$ver" $out >"$logs/exclusive.log" 2>&1 &&
			grep -q BUILD_EXCLUSIVE "$logs/exclusive.log"
		tap $? "sid: dkms build $out is refused (BUILD_EXCLUSIVE)" "log: $logs/exclusive.log"
	done
	step "sid: make dkms-uninstall" "$logs/checkout-dkms.log" make -C "$SD_IN/tree" dkms-uninstall
	out=$(fz_sid_run sh -c "dkms status fastzero; ls /lib/modules/*/updates/dkms/fastzero.ko* /usr/src/fastzero-$ver" 2>/dev/null) || true
	[[ -z $out ]]
	tap $? "sid: DKMS removed fastzero from every kernel, and its /usr/src copy" "left: $out"
}

# checkout_dkms_arm64 VER: DKMS builds the same source for an arm64 kernel
# (kernel id 7-arm64's headers, cross-compiled: -a aarch64), an AArch64
# module; DKMS finds no /lib/modules/KVER/build for unpacked headers, so
# the tree is named.
checkout_dkms_arm64() {
	local ver=$1 logs=$FZ_CACHE/sid/debs akver ko
	akver=$(FZ_HEADERS_ONLY=1 "$FZ_VM_DIR/kernels.sh" 7-arm64 2>"$logs/dkms-arm64.log" |
		sed -n 's/^KVER=//p')
	[[ -n $akver ]] || { tap 1 "sid: arm64 headers (kernel id 7-arm64)" "log: $logs/dkms-arm64.log"; return 0; }
	step "sid: dkms build -k $akver -a aarch64 (DKMS for an arm64 kernel)" "$logs/dkms-arm64.log" \
		dkms build "fastzero/$ver" -k "$akver" -a aarch64 \
		--kernelsourcedir "/usr/src/linux-headers-$akver" || return 0
	ko=$(compgen -G "$FZ_SID_ROOT/var/lib/dkms/fastzero/$ver/$akver/aarch64/module/fastzero.ko*" | head -n1)
	[[ -n $ko ]] && file -b "$ko" | grep -q 'ARM aarch64'
	tap $? "sid: DKMS's arm64 module is an AArch64 object" "$(file -b "${ko:-/nonexistent}" 2>&1)"
	fz_sid_run dkms remove "fastzero/$ver" -k "$akver/aarch64" >>"$logs/dkms-arm64.log" 2>&1 || true
}

# autopkgtest_dkms VER: autodep8's dkms-autopkgtest on the package, through
# autopkgtest with the null server (the chroot is the testbed; the test
# breaks it, which this tier undoes with the purge).  A superficial test is
# all it has, so a pass exits 8 ("no real tests"): judged by its summary,
# a PASS for every kernel with headers and no FAIL.
autopkgtest_dkms() {
	local ver=$1 log=$FZ_CACHE/sid/debs/autopkgtest.log rc=0 name
	name="sid: autopkgtest-pkg-dkms (autopkgtest -- null): DKMS builds and installs for every kernel with headers"
	fz_sid_run autopkgtest --no-built-binaries --ignore-restrictions=breaks-testbed \
		"$SD_IN/out/src/fastzero-$ver/" "$SD_IN/out/fastzero-dkms_${ver}_all.deb" -- null \
		>"$log" 2>&1 || rc=$?
	sed -n 's/^I: \(PASS\|FAIL\|SKIP\) /# autopkgtest: \1 /p' "$log"
	if [[ $rc == 0 || $rc == 8 ]] && grep -q '^dkms-autopkgtest *PASS' "$log" &&
		grep -q '^I: PASS ' "$log" && ! grep -q '^I: FAIL ' "$log"; then
		tap 0 "$name"
	else
		tap 1 "$name" "autopkgtest exited $rc, log: $log"
	fi
}

# arm64_tools VER: make deb FZ_DEB_ARCH=arm64 (dpkg-buildpackage -a arm64 -B:
# fastzero-tools only) in the chroot, lintian with no error; the package
# is arm64 with an AArch64 fzbench, its man pages (help2man on a build
# architecture fzbench) are the amd64 package's, and that fzbench runs under
# qemu-aarch64 against the chroot's arm64 libc, the one the package depends
# on.  The apt work is done once: arm64 added to dpkg, its lists fetched.
arm64_tools() {
	local ver=$1 logs=$FZ_CACHE/sid/debs r=$FZ_SID_ROOT deb x=$SD_IN/arm64 out n
	n="sid: ${SD_A64_PKGS[*]} installed in the chroot (arm64 by multiarch)"
	# shellcheck disable=SC2016 # dpkg-query's format
	out=$(fz_sid_run dpkg-query -W -f='${db:Status-Status}\n' "${SD_A64_PKGS[@]}" 2>/dev/null)
	if [[ $(grep -cx installed <<<"$out") == "${#SD_A64_PKGS[@]}" ]]; then
		tap 0 "$n"
	else
		fz_log "installing ${SD_A64_PKGS[*]} in the sid chroot (the arm64 cross build)"
		fz_sid_run dpkg --add-architecture arm64
		if [[ -z $(compgen -G "$r/var/lib/apt/lists/*_binary-arm64_Packages*") ]]; then
			rm -f "$r/var/lib/apt/.fz-updated"
			fz_sid_apt_update
		fi
		step "$n" "$logs/apt-arm64.log" \
			apt-get install -y -qq --no-install-recommends "${SD_A64_PKGS[@]}" || return 0
	fi
	step "sid: make deb FZ_DEB_ARCH=arm64 (dpkg-buildpackage -a arm64 -Pcross,nocheck -B; lintian: no errors)" \
		"$logs/make-deb-arm64.log" \
		env FZ_DEB_OUT="$SD_IN/out-arm64" FZ_DEB_ARCH=arm64 "$SD_IN/tree/debian/make-deb.sh" || return 0
	sed -n 's/^/# lintian (sid, arm64): /p' "$r$SD_IN/out-arm64/lintian.txt"
	deb=$SD_IN/out-arm64/fastzero-tools_${ver}_arm64.deb
	out=$(fz_sid_run sh -c "dpkg-deb -f $deb Architecture && dpkg-deb -x $deb $x &&
		file -b $x/usr/bin/fzbench" 2>&1)
	[[ $out == arm64$'\n'"ELF 64-bit LSB pie executable, ARM aarch64,"* ]]
	tap $? "sid: fastzero-tools_${ver}_arm64.deb: Architecture arm64, fzbench an AArch64 ELF" \
		"$(tr '\n' ' ' <<<"$out")"
	out=$(fz_sid_run sh -c "mkdir $x.amd64 && dpkg-deb -x $SD_IN/out/fastzero-tools_${ver}_amd64.deb $x.amd64 &&
		diff -r $x.amd64/usr/share/man $x/usr/share/man" 2>&1)
	tap $? "sid: the arm64 package's man pages are the amd64 package's" "$out"
	out=$(fz_sid_run sh -c "qemu-aarch64 $x/usr/bin/fzbench --help >/dev/null &&
		qemu-aarch64 $x/usr/bin/fzbench --version" 2>&1)
	[[ $out == "fzbench (fastzero) $ver" ]]
	tap $? "sid: the arm64 fzbench runs under qemu-aarch64 (--help, --version)" "$out"
}

main() {
	local logs=$FZ_CACHE/sid/debs kver ver r out
	mkdir -p "$logs"
	if ! out=$(fz_kernel_resolve 7 2>"$logs/kernel.log" && echo "$KVER"); then
		tap 1 "sid: kernel 7's headers in the chroot" "log: $logs/kernel.log"
		exit 1
	fi
	kver=$(tail -n1 <<<"$out")
	r=$FZ_SID_ROOT
	ver=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$FZ_REPO/dkms.conf")
	fz_sid_apt_update
	step "sid: ${SD_PKGS[*]} installed in the chroot" "$logs/apt.log" \
		apt-get install -y -qq --no-install-recommends "${SD_PKGS[@]}" || exit 1
	# what a run that stopped half way left in the chroot
	fz_sid_run sh -c "apt-get purge -y -qq fastzero-dkms fastzero-tools; dkms remove fastzero/$ver --all;
		rm -rf /usr/src/fastzero-$ver" >/dev/null 2>&1 || true
	rm -rf "$r$SD_IN"
	fz_stage_tree "$r$SD_IN/tree" || {
		tap 1 "sid: checkout staged in the chroot"
		exit 1
	}
	checkout_dkms "$kver" "$ver"
	step "sid: make deb (dpkg-buildpackage; lintian: no errors)" "$logs/make-deb.log" \
		env FZ_DEB_OUT="$SD_IN/out" FZ_DEB_KEEP_SRC=1 "$SD_IN/tree/debian/make-deb.sh" || exit 1
	sed -n 's/^/# lintian (sid): /p' "$r$SD_IN/out/lintian.txt"
	arm64_tools "$ver"
	# DKMS builds at install for the running kernel only, which has no
	# headers here (the host's): it says so and goes on
	step "sid: apt installs fastzero-dkms and fastzero-tools $ver with their dependencies" \
		"$logs/install.log" sh -c "apt-get install -y -qq --no-install-recommends \
		$SD_IN/out/fastzero-dkms_${ver}_all.deb $SD_IN/out/fastzero-tools_${ver}_amd64.deb" ||
		exit 1
	rm -f "$logs/dkms-$kver.ko"
	if step "sid: dkms install fastzero/$ver -k $kver" "$logs/dkms.log" \
		dkms install "fastzero/$ver" -k "$kver"; then
		out=$(fz_sid_run sh -c "modinfo -F vermagic /lib/modules/$kver/updates/dkms/fastzero.ko*" 2>&1)
		[[ $out == "$kver "* ]]
		tap $? "sid: the DKMS module's vermagic is $kver" "modinfo: $out"
		keep_module "$kver" "$logs/dkms-$kver.ko"
		tap $? "sid: the DKMS module kept for kernel 7's boot ($logs/dkms-$kver.ko)"
	fi
	autopkgtest_dkms "$ver"
	step "sid: apt purge fastzero-dkms fastzero-tools" "$logs/purge.log" \
		apt-get purge -y -qq fastzero-dkms fastzero-tools
	out=$(fz_sid_run dkms status fastzero 2>&1)
	[[ -z $out ]]
	tap $? "sid: DKMS has no fastzero after the purge" "dkms status: $out"
	rm -rf "$r$SD_IN"
	exit "$FAILED"
}

main "$@"
