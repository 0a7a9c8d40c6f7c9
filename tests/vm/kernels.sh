#!/usr/bin/env bash
# kernels.sh: resolve + fetch a kernel image and headers for a kernel id (6.1, 6.12, 7, ...) into $FZ_CACHE.
#
# Usage (standalone): tests/vm/kernels.sh <id>   -> prints KID=, KVER=, KIMG=, KWHY=, VMLINUZ=, KDIR=, FZ_CHROOT=
# Usage (sourced):    fz_kernel_resolve <id>     -> sets/exports those variables
#                     (and KARCH: x86, or arm64 for 6.1-arm64, 6.12-arm64 and 7-arm64)
#        tests/vm/kernels.sh --arm64-userland -> fetches the arm64 guest's busybox and
#                     liburing, prints the directory that holds them
#        tests/vm/kernels.sh --arm64-run CPU PROG ARG... -> runs an arm64 program
#                     under sid's qemu-aarch64 -cpu CPU
#
# Kernel ids with major >= FZ_SID_MIN_MAJOR (default 7: sid's own kernel, the
# one its linux-image-amd64 installs), and "newest" (the newest version in
# sid or experimental), come from Debian sid and
# are built inside a cached sid chroot ($FZ_CACHE/sid/root, FZ_CHROOT is set and
# KDIR is a path inside it); older ids come from the host's bookworm sources
# (FZ_CHROOT is empty, headers go to /usr/src via apt). The version is the
# newest that has everything the run uses of it (kernel-pick.sh); KIMG is the
# image package the Debian guest installs, KWHY why that version was taken.
# Within a check.sh run the choice is made once per id (fz_choose); outside
# one, it is remembered in $FZ_CACHE/kernels/<id>.env (FZ_REFRESH=1: anew).
# Ids 6.12-debug and 7-debug are debug kernels (KASAN, kmemleak, lockdep, fault
# injection) built locally by debug-kernel.sh: VMLINUZ is its bzImage and KDIR
# its build tree (7-debug's inside the sid chroot).  A series with a flavour,
# 6.1-rt, 6.12-cloud, 7-rt ..., is Debian's kernel of that flavour (PREEMPT_RT,
# or the cloud config); FZ_HEADERS_ONLY=1 fetches only its headers, for a
# compile-only build (VMLINUZ is then empty).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FZ_SID_MIRROR=${FZ_SID_MIRROR:-http://deb.debian.org/debian}
FZ_SID_MIN_MAJOR=${FZ_SID_MIN_MAJOR:-7}
FZ_SID_ROOT=$FZ_CACHE/sid/root
# Outputs of fz_kernel_resolve.
KID='' KVER='' KIMG='' KWHY='' VMLINUZ='' KDIR='' FZ_CHROOT=''
# The ids a run can ask for: checked before anything is fetched.
FZ_KERNEL_IDS='6.1 6.12 7 newest 6.12-debug 7-debug 6.1-rt 6.12-rt 7-rt 6.1-cloud 6.12-cloud 7-cloud 6.1-arm64 6.12-arm64 7-arm64'

# fz_kernel_id_ok ID: ID is one of FZ_KERNEL_IDS.
fz_kernel_id_ok() { [[ " $FZ_KERNEL_IDS " == *" $1 "* ]]; }

# ---------- sid chroot ----------

fz_sid_ensure() {
	(
		fz_lock sid
		[[ -e $FZ_SID_ROOT/.fz-debootstrap-ok ]] && exit 0
		fz_need_pkgs debootstrap
		fz_log "debootstrap sid into $FZ_SID_ROOT (first run only)"
		rm -rf "$FZ_SID_ROOT"
		mkdir -p "$FZ_CACHE/sid"
		debootstrap --variant=minbase sid "$FZ_SID_ROOT" "$FZ_SID_MIRROR" \
			>"$FZ_CACHE/sid/debootstrap.log" 2>&1 ||
			fz_die "debootstrap failed, see $FZ_CACHE/sid/debootstrap.log"
		touch "$FZ_SID_ROOT/.fz-debootstrap-ok"
	)
}

# fz_sid_exec CMD...: run a command in the sid chroot, with a /proc (objtool
# needs it) of its own: mounted in a private mount namespace, it goes away
# with the command and no other run's /proc is touched.  Takes no lock: for
# the debug kernel's compile, which must not hold up the module builds.
# With FZ_SID_OVER="DIR LAYER" (paths in the chroot), LAYER/upper is laid
# over DIR by overlayfs in that namespace too: the command sees DIR's files
# at their own paths and writes only to LAYER (a patched build of a built
# tree whose dependency files hold absolute paths).
fz_sid_exec() {
	local o=${FZ_SID_OVER:-}
	# shellcheck disable=SC2016 # expanded by that sh
	unshare --mount --propagation private /bin/sh -c \
		'r=$1 d=$2 l=$3; shift 3
		mount -t proc proc "$r/proc" || exit
		if [ -n "$l" ]; then
			mount -t overlay fz-over -o "lowerdir=$r$d,upperdir=$r$l/upper,workdir=$r$l/work" "$r$d" || exit
		fi
		exec chroot "$r" "$@"' fz-sid \
		"$FZ_SID_ROOT" "${o% *}" "${o#* }" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}

# fz_sid_run CMD...: fz_sid_exec under the "sid" lock (apt, module builds).
fz_sid_run() {
	(
		fz_lock sid
		fz_sid_exec "$@"
	)
}

# Experimental as well, for the newest kernel Debian ships (7.3-rc beside
# sid's 7.2): its packages are NotAutomatic, installed only when named.
fz_sid_sources() {
	local f=$FZ_SID_ROOT/etc/apt/sources.list.d/experimental.list
	# The archive this machine reaches may serve lists past their Valid-Until:
	# every apt-get update in the chroot (autopkgtest's own too) takes them.
	echo 'Acquire::Check-Valid-Until "false";' >"$FZ_SID_ROOT/etc/apt/apt.conf.d/99fz-valid-until"
	[[ -s $f ]] && return 0
	echo "deb $FZ_SID_MIRROR experimental main" >"$f"
	rm -f "$FZ_SID_ROOT/var/lib/apt/.fz-updated"
}

# Refresh the chroot's package lists when they are over a day old (sid moves).
fz_sid_apt_update() {
	local stamp=$FZ_SID_ROOT/var/lib/apt/.fz-updated
	fz_sid_sources
	[[ -z ${FZ_REFRESH:-} && -n $(find "$stamp" -mmin -1440 2>/dev/null) ]] && return 0
	fz_log "apt-get update in sid chroot"
	if fz_sid_run apt-get -qq -o Acquire::Check-Valid-Until=false update >&2; then
		touch "$stamp"
	else
		fz_log "apt-get update in the sid chroot failed (continuing with old lists)"
	fi
}

# ---------- QEMU ----------

# fz_qemu_resolve CPU [ARCH]: set the array FZ_QEMU to a qemu-system-x86_64
# command that knows every +feature and -feature of the -cpu string CPU: the
# host's QEMU, else sid's (Debian 12's QEMU 7.2 has no FSRS, for one), run
# from the sid chroot's files through the chroot's own dynamic loader.  For
# ARCH arm64, sid's qemu-system-aarch64 always: QEMU emulates FEAT_MOPS from
# 8.2 on, Debian 12 has 7.2.
fz_qemu_resolve() {
	local f known r=$FZ_SID_ROOT lib bin=qemu-system-x86_64 pkg=qemu-system-x86
	if [[ ${2:-x86} == arm64 ]]; then
		bin=qemu-system-aarch64 pkg=qemu-system-arm f=FZ_QEMU_FROM=sid
	else
		FZ_QEMU=(qemu-system-x86_64)
		known=$(qemu-system-x86_64 -cpu help)
		for f in ${1//,/ }; do
			[[ $f == [+-]* ]] && ! grep -qw -- "${f#[+-]}" <<<"$known" && break
			f=''
		done
		[[ ${FZ_QEMU_FROM:-} != sid ]] || f=${f:-FZ_QEMU_FROM=sid}
		[[ -n $f ]] || return 0
	fi
	fz_sid_ensure
	if [[ ! -x $r/usr/bin/$bin ]]; then
		fz_sid_apt_update
		fz_log "installing $pkg in the sid chroot (for -cpu $1)"
		fz_sid_run apt-get install -y -qq --no-install-recommends "$pkg" >&2
	fi
	lib=$r/usr/lib/x86_64-linux-gnu
	FZ_QEMU=(env "QEMU_MODULE_DIR=$lib/qemu" "$r/lib64/ld-linux-x86-64.so.2"
		--library-path "$lib:$r/lib/x86_64-linux-gnu" "$r/usr/bin/$bin"
		-L "$r/usr/share/seabios" -L "$r/usr/share/qemu")
	fz_log "-cpu $1 needs ${f#[+-]}: $("${FZ_QEMU[@]}" --version | head -n1) from the sid chroot"
}

# ---------- choosing a version ----------

# shellcheck source=kernel-pick.sh
source "$FZ_VM_DIR/kernel-pick.sh"

# ---------- fetch ----------

# The modules the guest loads from the image package (with what they need):
# zram, for swap in the guest (t_swap, the fuzzer's MADV_PAGEOUT).
FZ_GUEST_MODULES=(zram)

# fz_keep_modules TREE VER DST: copy FZ_GUEST_MODULES and what they depend
# on (modinfo's depends=: the package has no modules.dep, depmod makes it at
# install) out of an unpacked image package into DST, uncompressed (busybox
# insmod reads plain ELF), and DST/order: the file names, dependencies first.
# A guest module built into the kernel is listed in DST/builtin; one the
# kernel has neither as a module nor built in (modules.builtin), in
# DST/lacking: the guest reports that as a capability the kernel lacks.
fz_keep_modules() {
	local tree=$1 ver=$2 dst=$3 base m
	fz_need_pkgs xz-utils zstd
	for base in "$tree/lib/modules/$ver" "$tree/usr/lib/modules/$ver"; do
		[[ -d $base/kernel ]] && break
	done
	[[ -d $base/kernel ]] || fz_die "no modules in the image package of $ver"
	rm -rf "$dst"
	mkdir -p "$dst"
	: >"$dst/order"
	for m in "${FZ_GUEST_MODULES[@]}"; do
		if [[ -n $(fz_module_file "$base" "$m") ]]; then
			fz_keep_module "$base" "$m" "$dst"
			continue
		fi
		[[ -f $base/modules.builtin ]] ||
			fz_die "no module $m and no modules.builtin in the image package of $ver"
		if grep -qE "/(${m//_/[_-]})\.ko\$" "$base/modules.builtin"; then
			echo "$m" >>"$dst/builtin"
		else
			fz_log "kernel $ver has no $m (neither a module nor built in)"
			echo "$m" >>"$dst/lacking"
		fi
	done
	fz_modules_complete "$dst" || fz_die "the guest modules kept for $ver are incomplete"
}

# fz_module_file BASE NAME: the path of module NAME under BASE/kernel, or nothing.
fz_module_file() {
	find "$1/kernel" -regextype posix-extended \
		-regex ".*/(${2//_/[_-]})\.ko(\.(xz|zst|gz))?" | head -n1
}

# fz_module_deps FILE: the modules FILE depends on, one a line (modinfo's
# depends=, "-" as "_").  A modinfo that is missing or fails is fatal: the
# guest's insmod would fail on the symbols of a dependency left out.
fz_module_deps() {
	local deps
	command -v modinfo >/dev/null ||
		fz_die "modinfo not found (install kmod): cannot read the dependencies of $1"
	deps=$(modinfo -F depends "$1") ||
		fz_die "modinfo -F depends $1 failed: cannot read its dependencies"
	[[ -z $deps ]] || tr , '\n' <<<"${deps//-/_}"
}

# fz_keep_module BASE NAME DST: NAME's dependencies, then NAME itself.
fz_keep_module() {
	local base=$1 name=$2 dst=$3 f d deps out
	grep -qx "$name.ko" "$dst/order" && return 0
	f=$(fz_module_file "$base" "$name")
	[[ -n $f ]] || fz_die "no module $name in $base"
	deps=$(fz_module_deps "$f") || exit
	for d in $deps; do
		fz_keep_module "$base" "$d" "$dst"
	done
	out=$dst/$name.ko
	case $f in
	*.xz) xz -dc "$f" >"$out" ;;
	*.zst) zstd -qdc "$f" >"$out" ;;
	*.gz) gzip -dc "$f" >"$out" ;;
	*) cp "$f" "$out" ;;
	esac || fz_die "cannot decompress $f"
	[[ -s $out ]] || fz_die "$out is empty"
	echo "$name.ko" >>"$dst/order"
}

# fz_modules_complete DST: the kept modules are whole: every FZ_GUEST_MODULES
# entry is in DST/order, builtin or lacking, and every module in order comes
# after all it depends on.  Checks a cached DST as well (one kept before the
# dependencies were followed, or by a modinfo that failed, lacks them).
fz_modules_complete() {
	local dst=$1 m d deps seen=' '
	[[ -f $dst/order ]] || return 1
	while read -r m; do
		[[ -n $m ]] || continue
		[[ -s $dst/$m ]] || return 1
		deps=$(fz_module_deps "$dst/$m") || exit
		for d in $deps; do
			[[ $seen == *" $d.ko "* ]] || {
				fz_log "$dst: $m needs $d, which is not loaded before it"
				return 1
			}
		done
		seen+="$m "
	done <"$dst/order"
	for m in "${FZ_GUEST_MODULES[@]}"; do
		[[ $seen == *" $m.ko "* ]] || grep -qsx "$m" "$dst/builtin" "$dst/lacking" ||
			return 1
	done
}

# fz_fetch_image WHERE VER: download + extract the image package (and the
# modules package, where the modules have one: sid's linux-binary layout),
# keep vmlinuz and the guest's modules (fz_keep_modules).
fz_fetch_image() {
	local where=$1 ver=$2 pkg pkgs kdir deb x dl
	fz_need_pkgs kmod	# modinfo, for the modules' dependencies
	kdir=$FZ_CACHE/kernels/$ver
	if [[ -s $kdir/vmlinuz ]]; then
		fz_modules_complete "$kdir/modules" && return 0
		fz_log "the cached guest modules of $ver are incomplete: fetching the image again"
	fi
	pkg=$(fz_image_pkg "$where" "$ver") || fz_die "no image package for $ver"
	pkgs=("$pkg")
	[[ $pkg != linux-binary-* ]] || pkgs+=("linux-modules-$ver")
	fz_log "downloading ${pkgs[*]}"
	rm -rf "$kdir" && mkdir -p "$kdir/x"
	if [[ $where == sid ]]; then
		dl=$FZ_SID_ROOT/var/cache/fz-debs
		rm -rf "$dl" && mkdir -p "$dl"
		fz_sid_run sh -c "cd /var/cache/fz-debs && apt-get -qq -o APT::Sandbox::User=root download ${pkgs[*]}" >&2
	else
		dl=$kdir/dl
		mkdir -p "$dl"
		(cd "$dl" && apt-get -qq -o APT::Sandbox::User=root download "${pkgs[@]}") >&2
	fi
	for pkg in "${pkgs[@]}"; do
		deb=$(find "$dl" -name "${pkg}_*.deb" | head -n1)
		[[ -n $deb ]] || fz_die "download of $pkg failed"
		dpkg-deb -x "$deb" "$kdir/x"
	done
	for x in "boot/vmlinuz-$ver" "usr/lib/modules/$ver/vmlinuz" "lib/modules/$ver/vmlinuz"; do
		if [[ -s $kdir/x/$x ]]; then
			cp "$kdir/x/$x" "$kdir/vmlinuz.tmp"
			break
		fi
	done
	fz_keep_modules "$kdir/x" "$ver" "$kdir/modules"
	rm -rf "$kdir/x" "$dl"
	[[ -s $kdir/vmlinuz.tmp ]] || fz_die "no vmlinuz in ${pkgs[0]}"
	mv "$kdir/vmlinuz.tmp" "$kdir/vmlinuz"
}

# fz_fetch_headers WHERE VER
fz_fetch_headers() {
	local where=$1 ver=$2
	if [[ $where == sid ]]; then
		[[ -f $FZ_SID_ROOT/usr/src/linux-headers-$ver/Makefile && -x $FZ_SID_ROOT/usr/bin/make ]] &&
			return 0
		fz_log "installing linux-headers-$ver + make in sid chroot"
		fz_sid_run apt-get install -y -qq --no-install-recommends "linux-headers-$ver" make >&2
	else
		fz_need_pkgs "linux-headers-$ver" make gcc
	fi
}

# ---------- main entry ----------

# fz_lookup WHERE ID: "VER<TAB>IMAGE<TAB>why" (fz_pick), refreshing the
# package lists once if nothing fits.
fz_lookup() {
	local out ver img why
	if ! out=$(fz_pick "$1" "$2"); then
		if [[ $1 == host ]]; then fz_apt_update; else FZ_REFRESH=1 fz_sid_apt_update; fi
		out=$(fz_pick "$1" "$2") || return 1
	fi
	IFS=$'\t' read -r ver img why <<<"$out"
	fz_log "kernel $2 -> $ver ($1): $why"
	echo "$out"
}

# fz_fetch WHERE VER: image + headers (FZ_HEADERS_ONLY=1: headers), serialised per version.
fz_fetch() {
	(
		fz_lock "kernel-$2"
		[[ ${FZ_HEADERS_ONLY:-} == 1 ]] || fz_fetch_image "$1" "$2"
		fz_fetch_headers "$1" "$2"
	)
}

# fz_debug_resolve ID: "6.12-debug" or "7-debug", a KASAN/kmemleak/lockdep
# kernel built from Debian's linux-source by debug-kernel.sh (first use: ~8
# min compile).
fz_debug_resolve() {
	local out
	[[ $1 == 6.12-debug || $1 == 7-debug ]] ||
		fz_die "no debug kernel recipe for id '$1' (6.12-debug, 7-debug)"
	out=$("$FZ_VM_DIR/debug-kernel.sh" "${1%-debug}") || fz_die "debug kernel $1 could not be built"
	KID=$1
	KVER=$(sed -n 's/^KVER=//p' <<<"$out")
	VMLINUZ=$(sed -n 's/^VMLINUZ=//p' <<<"$out")
	KDIR=$(sed -n 's/^KDIR=//p' <<<"$out")
	FZ_CHROOT=$(sed -n 's/^FZ_CHROOT=//p' <<<"$out")
	KMODS=	# zram is built in
	[[ -n $KVER && -s $VMLINUZ && -f $FZ_CHROOT$KDIR/Makefile ]] ||
		fz_die "debug kernel $1: bad build output"
	export KID KVER KARCH VMLINUZ KDIR KMODS FZ_CHROOT
}

# fz_choose WHERE ID: sets ver, img (the Debian guest's image package, or
# "-") and why for ID.  In a run of check.sh (FZ_RUN_KERNELS, its
# directory of choices) the first caller chooses, from the package lists as
# they are now, and every later one (the matrix, the Debian guest, the
# debug kernel's series) reads that choice: one version per id per run.
# Outside a run, the version remembered in $FZ_CACHE/kernels/ID.env is
# reused (FZ_REFRESH=1 chooses anew).  When the lists offer nothing usable
# (no network, an archive in the middle of publishing), the remembered
# version is taken if its files are still in the cache.
fz_choose() {
	local where=$1 id=$2 envf=$FZ_CACHE/kernels/$2.env runf='' out lockfd
	ver='' img='' why=''
	if [[ -n ${FZ_RUN_KERNELS:-} ]]; then
		runf=$FZ_RUN_KERNELS/$id.env
		mkdir -p "$FZ_RUN_KERNELS"
		exec {lockfd}>"$runf.lock"
		flock "$lockfd"
		if [[ -s $runf ]]; then
			# shellcheck source=/dev/null
			source "$runf"
			ver=$KVER img=$KIMG why=$KWHY
		fi
	elif [[ -s $envf && -z ${FZ_REFRESH:-} ]]; then
		ver=$(sed -n 's/^KVER=//p' "$envf")
		img=$(sed -n 's/^KIMG=//p' "$envf")
		why="remembered in $envf"
		# a sid id remembered as an experimental kernel, an old env file
		if [[ $where == sid && $id != newest ]] && ! fz_in_sid "$ver"; then ver=''; fi
		[[ -n $img ]] || ver=''
	fi
	if [[ -z $ver ]]; then
		if out=$(fz_lookup "$where" "$id"); then
			IFS=$'\t' read -r ver img why <<<"$out"
		elif [[ -s $envf && -s $FZ_CACHE/kernels/$(sed -n 's/^KVER=//p' "$envf")/vmlinuz ]]; then
			ver=$(sed -n 's/^KVER=//p' "$envf")
			img=$(sed -n 's/^KIMG=//p' "$envf")
			why="the apt lists offer no usable $id version now: the cached $ver"
			fz_log "kernel $id: $why"
		else
			fz_die "no kernel version for id $id that the run can use in the $where apt lists"
		fi
	fi
	printf 'KVER=%q\nKIMG=%q\nKWHY=%q\n' "$ver" "${img:--}" "$why" >"$envf"
	[[ -z $runf ]] || {
		cp "$envf" "$runf"
		exec {lockfd}>&-
	}
}

# ---------- arm64 ----------

# Debian's arm64 kernels: 6.1-arm64 is bookworm's, 6.12-arm64 trixie's,
# 7-arm64 sid's.  Chosen
# from the archive's arm64 index as it is now (a day's cache; the version
# remembered, if its files are cached, when the index cannot be read),
# booted by qemu-system-aarch64, and built against in the sid chroot:
# their headers unpacked at their own paths there, with the amd64 build of
# the same version's kbuild tools (the headers' own fixdep and modpost are
# arm64 programs) and the cross compiler each kernel names in
# CONFIG_CC_VERSION_TEXT (its .kernelvariables calls it by that name).
FZ_ARM64_DIR=$FZ_CACHE/arm64

# fz_arm64_index SUITE ARCH: a path to SUITE's Packages index for ARCH.
fz_arm64_index() {
	local f=$FZ_ARM64_DIR/Packages-$1-$2
	mkdir -p "$FZ_ARM64_DIR"
	if [[ -n ${FZ_REFRESH:-} || -z $(find "$f" -mmin -1440 2>/dev/null) ]]; then
		fz_need_pkgs curl xz-utils
		if curl -fsS "$FZ_SID_MIRROR/dists/$1/main/binary-$2/Packages.xz" | xz -dc >"$f.tmp"; then
			mv "$f.tmp" "$f"
		else
			rm -f "$f.tmp"
			fz_log "the $1 $2 index could not be fetched (continuing with the cached one)"
		fi
	fi
	[[ -s $f ]] || return 1
	echo "$f"
}

# fz_arm64_deb SUITE ARCH PKG DIR: download PKG into DIR, print its path.
fz_arm64_deb() {
	local idx pool
	idx=$(fz_arm64_index "$1" "$2") || return 1
	pool=$(awk -v p="$3" '$1 == "Package:" { pk = $2 } $1 == "Filename:" && pk == p { print $2 }' "$idx" |
		tail -n1)
	[[ -n $pool ]] || return 1
	[[ -s $4/${pool##*/} ]] || curl -fsS -o "$4/${pool##*/}" "$FZ_SID_MIRROR/$pool" || return 1
	echo "$4/${pool##*/}"
}

# fz_arm64_pick ID: the newest version SUITE has headers of, and SUITE.
fz_arm64_pick() {
	local suite=trixie re='^6\.12\.' idx
	[[ $1 == 7-arm64 ]] && suite=sid re='^[0-9]{2,}\.|^[7-9]\.'
	[[ $1 == 6.1-arm64 ]] && suite=bookworm re='^6\.1\.'
	idx=$(fz_arm64_index "$suite" arm64) || return 1
	# 6.12.117+deb13 and 7.2.13+deb14, or bookworm's 6.1.0-57 (ABI number)
	sed -n 's/^Package: linux-headers-\([0-9][^-]*\(-[0-9][0-9]*\)\?\)-arm64$/\1/p' "$idx" |
		grep -E "$re" |
		sort -V | tail -n1 | sed "s/\$/-arm64 $suite/"
}

# fz_arm64_fetch VER SUITE: the image (vmlinuz, the guest's modules; not
# with FZ_HEADERS_ONLY=1), the headers in the sid chroot, their cross
# compiler; once per version.  bookworm names its kbuild tools by series
# (linux-kbuild-6.1), later suites by version.
fz_arm64_fetch() {
	local ver=$1 suite=$2 kdir=$FZ_CACHE/kernels/$1 base=${1%-arm64} dl deb p set cc kb
	fz_sid_ensure
	dl=$kdir/dl
	mkdir -p "$dl"
	kb=linux-kbuild-$base
	[[ $suite != bookworm ]] || kb=linux-kbuild-$(cut -d. -f1-2 <<<"$base")
	if [[ ${FZ_HEADERS_ONLY:-} != 1 ]] &&
		{ [[ ! -s $kdir/vmlinuz ]] || ! fz_modules_complete "$kdir/modules"; }; then
		rm -rf "$kdir/x" && mkdir -p "$kdir/x"
		# trixie's image package, or sid's linux-binary layout (image + modules)
		for set in "linux-image-$ver-unsigned" "linux-binary-$ver linux-modules-$ver"; do
			deb=''
			for p in $set; do
				deb=$(fz_arm64_deb "$suite" arm64 "$p" "$dl") || { deb=''; break; }
				dpkg-deb -x "$deb" "$kdir/x"
			done
			[[ -z $deb ]] || break
		done
		[[ -n $deb ]] || fz_die "no image package of $ver in $suite's arm64 index"
		cp "$(find "$kdir/x" -name "vmlinuz-$ver" -o -path "*/modules/$ver/vmlinuz" | head -n1)" \
			"$kdir/vmlinuz" || fz_die "no vmlinuz in the image package of $ver"
		fz_keep_modules "$kdir/x" "$ver" "$kdir/modules"
		rm -rf "$kdir/x"
	fi
	if [[ ! -f $FZ_SID_ROOT/usr/src/linux-headers-$ver/.config ]]; then
		for p in "arm64 linux-headers-$ver" "arm64 linux-headers-$base-common" \
			"amd64 $kb"; do
			deb=$(fz_arm64_deb "$suite" "${p% *}" "${p#* }" "$dl") ||
				fz_die "${p#* } is not in $suite's ${p% *} index"
			# bookworm's packages put /lib/modules in /lib: the chroot's
			# merged-/usr symlink must stay one
			dpkg-deb --fsys-tarfile "$deb" |
				tar -x -C "$FZ_SID_ROOT" --keep-directory-symlink
		done
	fi
	# no /lib/modules/VER/build: DKMS (autoinstall, autopkgtest) takes
	# every kernel it finds there for one of the chroot's own, and these
	# are built against by path (KDIR) only
	rm -f "$FZ_SID_ROOT/usr/lib/modules/$ver/build" "$FZ_SID_ROOT/usr/lib/modules/$ver/source"
	rmdir "$FZ_SID_ROOT/usr/lib/modules/$ver" 2>/dev/null || true
	rm -rf "$dl"
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' \
		"$FZ_SID_ROOT/usr/src/linux-headers-$ver/.config")
	# bookworm built its arm64 kernels natively: gcc-12 is the same compiler
	cc=aarch64-linux-gnu-${cc#aarch64-linux-gnu-}
	[[ $cc =~ ^aarch64-linux-gnu-gcc-[0-9]+$ ]] || fz_die "$ver was built with '$cc'"
	if [[ ! -x $FZ_SID_ROOT/usr/bin/$cc ]]; then
		fz_sid_apt_update
		fz_log "installing ${cc#aarch64-linux-gnu-}-aarch64-linux-gnu in the sid chroot (for $ver)"
		fz_sid_run apt-get install -y -qq --no-install-recommends make \
			"${cc#aarch64-linux-gnu-}-aarch64-linux-gnu" >&2
	fi
}

# fz_arm64_userland: the guest's arm64 userland, the host's own release
# (bookworm) as the amd64 guest has it: $FZ_ARM64_DIR/busybox
# (busybox-static) and, for the suite's static link, $FZ_ARM64_DIR/sysroot
# with liburing-dev (a libc-free library; trixie's needs newer uapi
# headers than the host's cross libc has).  The suite is cross-compiled
# by the host's gcc-aarch64-linux-gnu.
fz_arm64_userland() {
	local d=$FZ_ARM64_DIR p deb
	fz_need_pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross curl xz-utils
	(
		fz_lock arm64-userland
		[[ -x $d/busybox && -f $d/sysroot/.fz-ok ]] && exit 0
		fz_log "downloading busybox-static and liburing-dev (arm64)"
		rm -rf "$d/x" "$d/sysroot" && mkdir -p "$d/x" "$d/sysroot"
		for p in busybox-static liburing-dev; do
			deb=$(fz_arm64_deb bookworm arm64 "$p" "$d") ||
				fz_die "$p is not in bookworm's arm64 index"
			dpkg-deb -x "$deb" "$([[ $p == busybox-static ]] && echo "$d/x" || echo "$d/sysroot")"
			rm -f "$deb"
		done
		cp "$(find "$d/x" -path "*bin/busybox" | head -n1)" "$d/busybox" ||
			fz_die "no busybox in busybox-static (arm64)"
		rm -rf "$d/x"
		touch "$d/sysroot/.fz-ok"
	)
}

# fz_arm64_run CPU PROG ARG...: run the arm64 program PROG (linked against
# the host's cross libc) under sid's qemu-aarch64 -cpu CPU (QEMU 11: MOPS).
fz_arm64_run() {
	local r=$FZ_SID_ROOT cpu=$1
	shift
	fz_sid_ensure
	if [[ ! -x $r/usr/bin/qemu-aarch64 ]]; then
		fz_sid_apt_update
		fz_log "installing qemu-user in the sid chroot (arm64 userspace)"
		fz_sid_run apt-get install -y -qq --no-install-recommends qemu-user >&2
	fi
	"$r/lib64/ld-linux-x86-64.so.2" --library-path "$r/usr/lib/x86_64-linux-gnu:$r/lib/x86_64-linux-gnu" \
		"$r/usr/bin/qemu-aarch64" -cpu "$cpu" -L /usr/aarch64-linux-gnu "$@"
}

# fz_arm64_resolve ID: as fz_kernel_resolve, for 6.1-arm64, 6.12-arm64 and 7-arm64.
fz_arm64_resolve() {
	local id=$1 envf=$FZ_CACHE/kernels/$1.env runf out ver suite why
	runf=${FZ_RUN_KERNELS:+$FZ_RUN_KERNELS/$id.env}
	mkdir -p "$FZ_CACHE/kernels" ${FZ_RUN_KERNELS:+"$FZ_RUN_KERNELS"}
	if [[ -n $runf && -s $runf ]]; then
		# shellcheck source=/dev/null
		source "$runf"
		ver=$KVER suite=$KIMG why=$KWHY
	elif out=$(fz_arm64_pick "$id"); then
		read -r ver suite <<<"$out"
		why="the newest in $suite's arm64 index"
	elif [[ -s $envf ]]; then
		# shellcheck source=/dev/null
		source "$envf"
		ver=$KVER suite=$KIMG why="the index cannot be read: the cached $KVER"
	else
		fz_die "no arm64 kernel for id $id in the archive's index"
	fi
	fz_log "kernel $id -> $ver ($suite): $why"
	printf 'KVER=%q\nKIMG=%q\nKWHY=%q\n' "$ver" "$suite" "$why" >"$envf"
	[[ -z $runf || -s $runf ]] || cp "$envf" "$runf"
	(
		fz_lock "kernel-$ver"
		fz_arm64_fetch "$ver" "$suite"
	)
	KID=$id KVER=$ver KIMG=$suite KWHY=$why KARCH=arm64
	VMLINUZ=$FZ_CACHE/kernels/$ver/vmlinuz KMODS=$FZ_CACHE/kernels/$ver/modules
	KDIR=/usr/src/linux-headers-$ver FZ_CHROOT=$FZ_SID_ROOT
	export KID KVER KIMG KWHY KARCH VMLINUZ KDIR KMODS FZ_CHROOT
}

# fz_kernel_resolve ID: sets KID KVER KIMG KWHY KARCH VMLINUZ KDIR KMODS
# FZ_CHROOT (exported).
fz_kernel_resolve() {
	local id=$1 where=host ver img why series=${1%-rt}
	series=${series%-cloud}
	KARCH=x86
	fz_kernel_id_ok "$id" || fz_die "unknown kernel id '$id': one of $FZ_KERNEL_IDS"
	if [[ $id == *-debug ]]; then
		fz_debug_resolve "$id"
		return 0
	fi
	if [[ $id == *-arm64 ]]; then
		fz_arm64_resolve "$id"
		return 0
	fi
	[[ $series =~ ^[0-9]+(\.[0-9]+)*$ || $id == newest ]] || fz_die "bad kernel id '$id'"
	if [[ $id == newest ]] || ((${series%%.*} >= FZ_SID_MIN_MAJOR)); then
		where=sid
	fi
	mkdir -p "$FZ_CACHE/kernels"
	if [[ $where == sid ]]; then
		fz_sid_ensure
		fz_sid_apt_update
	fi
	fz_choose "$where" "$id"
	if ! fz_fetch "$where" "$ver"; then
		[[ $why == remembered* ]] || fz_die "kernel $id: $ver could not be fetched"
		fz_log "cached kernel $ver for id $id is no longer obtainable; choosing again"
		FZ_REFRESH=1 fz_choose "$where" "$id"
		fz_fetch "$where" "$ver" || fz_die "kernel $id: $ver could not be fetched"
	fi
	KID=$id
	KVER=$ver
	KIMG=$img
	KWHY=$why
	VMLINUZ=$FZ_CACHE/kernels/$ver/vmlinuz
	[[ ${FZ_HEADERS_ONLY:-} != 1 ]] || VMLINUZ=
	KDIR=/usr/src/linux-headers-$ver
	KMODS=$FZ_CACHE/kernels/$ver/modules
	FZ_CHROOT=
	[[ $where == sid ]] && FZ_CHROOT=$FZ_SID_ROOT
	[[ -n $FZ_CHROOT || -f $KDIR/Makefile ]] || fz_die "headers missing: $KDIR"
	export KID KVER KIMG KWHY KARCH VMLINUZ KDIR KMODS FZ_CHROOT
}

if [[ ${BASH_SOURCE[0]} == "$0" && ${1:-} == --arm64-userland ]]; then
	fz_arm64_userland
	echo "$FZ_ARM64_DIR"
elif [[ ${BASH_SOURCE[0]} == "$0" && ${1:-} == --arm64-run ]]; then
	shift
	fz_arm64_run "$@"
elif [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	[[ $# -eq 1 ]] || {
		echo "usage: $0 <kernel-id>" >&2
		exit 2
	}
	fz_kernel_resolve "$1"
	# KWHY is prose, one line, unquoted
	printf 'KID=%q\nKVER=%q\nKIMG=%q\nKWHY=%s\nVMLINUZ=%q\nKDIR=%q\nFZ_CHROOT=%q\n' \
		"$KID" "$KVER" "${KIMG:--}" "${KWHY:-}" "$VMLINUZ" "$KDIR" "$FZ_CHROOT"
fi
