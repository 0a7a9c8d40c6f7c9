#!/usr/bin/env bash
# debian-guest.sh: the real-machine path in a full Debian 13 (trixie) guest (systemd, udev, DKMS): the README's steps, make install/uninstall, the .debs with DKMS, autoload at boot, an upgrade in use, fastzero-run, purge.
#
# Usage: tests/vm/debian-guest.sh           build the image if needed, boot it twice, print TAP
#        tests/vm/debian-guest.sh --build   only build the image
#        tests/vm/debian-guest.sh --host    only the packaging checks on the host (no VM)
#        tests/vm/debian-guest.sh --guest   the steps, inside the guest (fz-guest.service)
# Env: FZ_DG_TIMEOUT  seconds per boot (default 2400); FZ_DG_MEM (default 3G)
#
# The image ($FZ_CACHE/debian-guest/root.img) is a raw ext4 file system made
# with mkfs.ext4 -d from a debootstrapped trixie with trixie's own 6.12
# kernel and headers (the newest version whose headers and image are both
# installable: kernel-pick.sh on the trixie lists), gcc, make, dkms, fio, and
# in /opt/fz-debs the .debs of a second kernel's headers (the newest in
# trixie-backports, 7.x today), installed offline by a step.  Each run boots
# a qcow2 overlay of it with its own vmlinuz/initrd, root=/dev/vda, and the
# checkout (git's tracked and untracked-not-ignored files, and the .debs
# make deb built of it on the host) as an ext4 disk on /dev/vdb, mounted at
# /src.  fz-guest.service runs this script with --guest; every step prints
# "FZG: ok - NAME" or "FZG: not ok - NAME # DETAIL", which becomes one TAP
# line here.  Boot 1 runs the README from the checkout, make install and
# uninstall, and installs the .debs; it ends with "FZG: reboot".  Boot 2
# (same disk) checks what modules-load.d, udev and modprobe.d did with the
# package's module at boot, then upgrades it in use, builds it for the
# second kernel, runs unmodified programs through fastzero-run, removes and
# purges.  DKMS from the checkout (dkms install .) is sid-debs.sh's, in the
# sid chroot, natively.  Serial logs: $FZ_CACHE/debian-guest/logs/boot{1,2}.log.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=kernel-pick.sh
source "$FZ_VM_DIR/kernel-pick.sh"

DG_DIR=$FZ_CACHE/debian-guest
DG_TIMEOUT=${FZ_DG_TIMEOUT:-2400}
DG_MEM=${FZ_DG_MEM:-3G}
# TCG runs rep stosb ~10x slower than rep stosq: max,-erms keeps the README's
# dd and fio lines short (the variant matrix is check.sh's busybox boots).
DG_CPU=${FZ_DG_CPU:-max,-erms}
DG_DEBS=/opt/fz-debs	# in the guest: the second kernel's headers
# dwarves: pahole, which Kbuild runs on every module for 6.12's BTF (docs/install.md).
# pv, stress-ng, python3: unmodified clients of /dev/zero for fastzero-run.
DG_PKGS=(systemd-sysv udev kmod initramfs-tools sudo gcc make libc6-dev dkms openssl
	dwarves fio gnuplot-nox jq procps pv stress-ng python3)

# ---------- host: image ----------

# What dpkg does not unpack (path-exclude, dpkg.cfg(5)): the modules of
# hardware and file systems the guest has none of (every DKMS install and
# remove runs depmod, which reads each module: under TCG ~115 s a run with
# all of them), and documentation.
DG_NO_MODULES=(sound drivers/gpu drivers/media drivers/net drivers/infiniband drivers/staging
	drivers/bluetooth drivers/iio drivers/isdn drivers/usb drivers/scsi drivers/hid
	drivers/input drivers/md drivers/nvme drivers/hwmon drivers/mtd drivers/thunderbolt
	drivers/platform drivers/crypto drivers/edac drivers/firewire drivers/pcmcia
	net fs/btrfs fs/xfs fs/nfs fs/nfsd fs/ocfs2 fs/ceph fs/smb fs/gfs2 fs/f2fs fs/bcachefs)
# Quoted: dpkg matches the globs; the host's shell must not expand them.
DG_NO_FILES=('/usr/share/doc/*' '/usr/share/man/*' '/usr/share/info/*' '/usr/share/locale/*')
# The initramfs holds what the guest's root disk needs, not every driver.
DG_INITRAMFS_MODULES=(virtio_pci virtio_blk ext4)

# dg_kvers: sets K1 (the guest's kernel: trixie's 6.12), K1IMG (its image
# package: the signed one, else -unsigned) and K2 (headers only: the newest
# other kernel a trixie user can install, backports' today), chosen from
# the trixie lists as they are now; recorded for check.sh's kernel report.
dg_kvers() {
	local out why
	fz_trixie_apt_update
	out=$(FZ_PICK_GUEST_ID=6.12 fz_pick trixie 6.12) || fz_die "no installable trixie 6.12 kernel"
	IFS=$'\t' read -r K1 K1IMG why <<<"$out"
	fz_log "trixie guest kernel: $K1 ($why)"
	out=$(FZ_PICK_GUEST_ID=none fz_pick trixie newest "$K1") ||
		fz_die "no second trixie kernel with installable headers"
	IFS=$'\t' read -r K2 _ _ <<<"$out"
	[[ $K1IMG == linux-image-"$K1"* ]] || fz_die "no guest image for $K1"
	[[ -z ${FZ_RUN_KERNELS:-} ]] || {
		mkdir -p "$FZ_RUN_KERNELS"
		printf 'KVER=%q\nKIMG=%q\nKWHY=%q\n' "$K1" "$K1IMG" "the trixie guest's kernel: $why" \
			>"$FZ_RUN_KERNELS/trixie.env"
		printf 'KVER=%q\nKIMG=-\nKWHY=%q\n' "$K2" "the trixie guest's second kernel (headers): newest after $K1" \
			>"$FZ_RUN_KERNELS/trixie-2nd.env"
	}
}

dg_chroot() { chroot "$DG_DIR/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"; }

# dg_configure ROOT: fstab, hostname, the test unit, no getty on the console.
dg_configure() {
	local r=$1
	echo fz-guest >"$r/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 fz-guest\n' >"$r/etc/hosts"
	printf '/dev/vda / ext4 rw 0 0\n/dev/vdb /src ext4 rw,nofail 0 0\n' >"$r/etc/fstab"
	mkdir -p "$r/src"
	cat >"$r/etc/systemd/system/fz-guest.service" <<'EOF'
[Unit]
Description=fastzero guest steps (tests/vm/debian-guest.sh --guest)
After=local-fs.target systemd-modules-load.service systemd-udev-trigger.service
RequiresMountsFor=/src

[Service]
Type=oneshot
ExecStart=/src/tests/vm/debian-guest.sh --guest
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
	ln -sf /etc/systemd/system/fz-guest.service \
		"$r/etc/systemd/system/multi-user.target.wants/fz-guest.service"
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
	ln -sf /dev/null "$r/etc/systemd/system/getty@tty1.service"
	passwd -R "$r" -d root >/dev/null
}

# dg_dpkg_cfg ROOT: unpack less, and fast: dpkg syncs nothing (the image is
# made again from scratch if the build stops half way).
dg_dpkg_cfg() {
	local r=$1 d f
	for d in "${DG_NO_MODULES[@]}"; do
		printf 'path-exclude=%s/modules/*/kernel/%s/*\n' /lib "$d" /usr/lib "$d"
	done >"$r/etc/dpkg/dpkg.cfg.d/fz-no-hardware-modules"
	for f in "${DG_NO_FILES[@]}"; do
		echo "path-exclude=$f"
	done >"$r/etc/dpkg/dpkg.cfg.d/fz-no-docs"
	echo force-unsafe-io >"$r/etc/dpkg/dpkg.cfg.d/fz-unsafe-io"
	mkdir -p "$r/etc/initramfs-tools/conf.d"
	echo MODULES=list >"$r/etc/initramfs-tools/conf.d/fz-modules"
	printf '%s\n' "${DG_INITRAMFS_MODULES[@]}" >>"$r/etc/initramfs-tools/modules"
}

dg_build_image() {
	local id log=$DG_DIR/build.log r=$DG_DIR/root t0
	t0=$(date +%s)
	dg_kvers
	# "-unsigned" after K1 only when the guest installs that image
	id="v3 trixie $K1${K1IMG#linux-image-"$K1"} $K2 ${DG_PKGS[*]} ${DG_NO_MODULES[*]} ${DG_NO_FILES[*]}"
	[[ -s $DG_DIR/root.img && $(cat "$DG_DIR/image.id" 2>/dev/null) == "$id" ]] && return 0
	fz_need_pkgs debootstrap e2fsprogs qemu-utils
	fz_log "building the Debian guest image into $DG_DIR (log: $log)"
	rm -rf "$r" "$DG_DIR/root.img" "$DG_DIR/image.id"
	mkdir -p "$DG_DIR"
	debootstrap --variant=minbase trixie "$r" "$FZ_TRIXIE_MIRROR" >"$log" 2>&1 ||
		fz_die "debootstrap failed, see $log"
	fz_trixie_sources >"$r/etc/apt/sources.list"
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod +x "$r/usr/sbin/policy-rc.d"
	dg_dpkg_cfg "$r"
	mount -t proc proc "$r/proc"
	# shellcheck disable=SC2064 # expand now: the path
	trap "umount '$r/proc' 2>/dev/null" EXIT
	mkdir -p "$r$DG_DEBS/partial"
	if ! { dg_chroot apt-get -qq update &&
		dg_chroot apt-get install -y -qq --no-install-recommends "${DG_PKGS[@]}" &&
		echo "guest kernel: $K1IMG" &&
		# apart, so that the initramfs is made once (not again by triggers)
		dg_chroot apt-get install -y -qq --no-install-recommends \
			"$K1IMG" "linux-headers-$K1" &&
		dg_chroot apt-get install -y -qq -d --no-install-recommends \
			-o Dir::Cache::archives="$DG_DEBS" "linux-headers-$K2" &&
		dg_chroot apt-get clean; } >>"$log" 2>&1; then
		umount "$r/proc"
		fz_die "package install in the guest root failed, see $log"
	fi
	umount "$r/proc"
	trap - EXIT
	rm -rf "$r$DG_DEBS/partial" "$r/usr/sbin/policy-rc.d" "$r"/var/lib/apt/lists/*_Packages \
		"$r/etc/dpkg/dpkg.cfg.d/fz-unsafe-io"
	compgen -G "$r$DG_DEBS/linux-headers-${K2}_*.deb" >/dev/null || fz_die "no $K2 headers .deb, see $log"
	dg_configure "$r"
	cp "$r/boot/vmlinuz-$K1" "$DG_DIR/vmlinuz"
	cp "$r/boot/initrd.img-$K1" "$DG_DIR/initrd.img"
	mkfs.ext4 -q -F -L fzroot -d "$r" "$DG_DIR/root.img.tmp" 8G >>"$log" 2>&1 ||
		fz_die "mkfs.ext4 -d failed, see $log"
	mv "$DG_DIR/root.img.tmp" "$DG_DIR/root.img"
	rm -rf "$r"
	echo "$id" >"$DG_DIR/image.id"
	fz_log "image built in $(($(date +%s) - t0)) s"
}


# ---------- host: packaging checks (no VM) ----------

tap() {	# tap 0|1 NAME [DETAIL]
	if [[ $1 == 0 ]]; then echo "ok - $2"; else echo "not ok - $2${3:+ # $3}"; DG_FAILED=1; fi
}

# refused CMD...: exit status non-zero, exactly one line on stderr.
refused() {
	local err rc=0
	err=$("$@" 2>&1 >/dev/null) || rc=$?
	echo "# $* -> $rc: $err"
	((rc != 0)) && [[ $(wc -l <<<"$err") == 1 ]]
}

dg_host_checks() {
	local src=$DG_DIR/run/host-src d=$DG_DIR/run/destdir files want
	fz_stage_tree "$src" || { tap 1 "checkout staged"; return; }
	rm -rf "$d"
	if make -C "$src" install DESTDIR="$d" >"$DG_DIR/run/host-install.log" 2>&1; then
		files=$(cd "$d" && find . -type f | sort | tr '\n' ' ')
		want='./etc/modprobe.d/fastzero.conf ./etc/udev/rules.d/60-fastzero.rules ./lib/modules/*/updates/driver/fastzero.ko*'
		echo "# make install DESTDIR=... wrote: $files"
		# shellcheck disable=SC2254 # want is a pattern
		case "$files" in $want) tap 0 "host: make install DESTDIR= writes the module, the udev rule and modprobe.d, no modules-load.d" ;;
		*) tap 1 "host: make install DESTDIR= writes the module, the udev rule and modprobe.d, no modules-load.d" "got: $files" ;;
		esac
		make -C "$src" install DESTDIR="$d" AUTOLOAD=1 >>"$DG_DIR/run/host-install.log" 2>&1
		[[ -f $d/etc/modules-load.d/fastzero.conf ]]
		tap $? "host: make install DESTDIR= AUTOLOAD=1 adds modules-load.d/fastzero.conf"
		make -C "$src" uninstall DESTDIR="$d" >>"$DG_DIR/run/host-install.log" 2>&1
		files=$(cd "$d" && find . -type f | sort | tr '\n' ' ')
		tap "$([[ -z $files ]] && echo 0 || echo 1)" "host: make uninstall DESTDIR= removes every file install wrote" "left: $files"
	else
		tap 1 "host: make install DESTDIR= AUTOLOAD=1" "log: $DG_DIR/run/host-install.log"
	fi
	rm -rf "$d"
	refused make -C "$src" KDIR=/nonexistent
	tap $? "host: make without kernel headers: one line on stderr, non-zero exit"
	refused make -C "$src" install KDIR=/nonexistent DESTDIR="$d" && [[ ! -e $d ]]
	tap $? "host: make install without kernel headers: one line, non-zero exit, nothing written"
	refused runuser -u nobody -- make -C "$src" install
	tap $? "host: make install as non-root: one line, non-zero exit"
	refused runuser -u nobody -- make -C "$src" bench
	tap $? "host: make bench as non-root: one line, non-zero exit"
}

# dkms_version DIR: PACKAGE_VERSION of DIR/dkms.conf, fastzero's one version.
dkms_version() { sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$1/dkms.conf"; }

# dg_debs DIR: make deb of the tree as its version (DIR/a) and as the next
# one (DIR/b), for the guest's install, upgrade and purge steps.
dg_debs() {
	local v log=$DG_DIR/run/make-deb.log
	v=$(dkms_version "$FZ_REPO")
	if FZ_DEB_OUT=$1/a "$FZ_REPO/debian/make-deb.sh" >"$log" 2>&1 &&
		FZ_DEB_VERSION=$v+up1 FZ_DEB_OUT=$1/b "$FZ_REPO/debian/make-deb.sh" >>"$log" 2>&1; then
		rm -f "$1"/?/*-dbgsym_*.deb
		tap 0 "host: make deb: fastzero-dkms and fastzero-tools $v, and $v+up1 for the upgrade"
	else
		tap 1 "host: make deb: fastzero-dkms and fastzero-tools $v, and $v+up1" "log: $log"
	fi
}

# ---------- host: boot ----------

dg_boot() {	# dg_boot N: boot the run's disks, serial log to logs/bootN.log
	local n=$1 log=$DG_DIR/logs/boot$1.log rc=0
	fz_log "boot $n (cpu $DG_CPU, $(fz_accel), timeout ${DG_TIMEOUT}s): $log"
	timeout -k 10 "$DG_TIMEOUT" qemu-system-x86_64 -accel "$(fz_accel)" -cpu "$DG_CPU" \
		-m "$DG_MEM" -smp 2 -display none -vga none -monitor none -serial stdio \
		-nic none -no-reboot -kernel "$DG_DIR/vmlinuz" -initrd "$DG_DIR/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 quiet" \
		-drive "file=$DG_DIR/run/root.qcow2,if=virtio,format=qcow2" \
		-drive "file=$DG_DIR/run/src.img,if=virtio,format=raw" \
		</dev/null 2>"$log.qemu-stderr" | sed -u 's/\r//g' >"$log" || rc=$?
	return "$rc"
}

# dg_results LOG: the guest's FZG: lines as TAP.
dg_results() {
	local line
	while IFS= read -r line; do
		case $line in
		"FZG: ok - "*) echo "${line#FZG: }" ;;
		"FZG: not ok - "*) echo "${line#FZG: }"; DG_FAILED=1 ;;
		"FZG: # "*) echo "${line#FZG: }" ;;
		esac
	done < <(grep -a '^FZG: ' "$1")
}

dg_main() {
	local t0 t rc n
	DG_FAILED=0
	fz_lock debian-guest
	mkdir -p "$DG_DIR/logs" "$DG_DIR/run"
	t0=$(date +%s)
	if ! (dg_build_image) >&2; then
		tap 1 "Debian guest image built" "log: $DG_DIR/build.log"
		return 1
	fi
	echo "# image ready in $(($(date +%s) - t0)) s"
	tap 0 "Debian guest image built ($(cut -d' ' -f2-3 "$DG_DIR/image.id"))"
	dg_host_checks
	fz_stage_tree "$DG_DIR/run/src" || { tap 1 "checkout staged for the guest"; return 1; }
	dg_debs "$DG_DIR/run/src/fz-debs"
	rm -f "$DG_DIR/run/src.img" "$DG_DIR/run/root.qcow2"
	if ! mkfs.ext4 -q -F -L fzsrc -d "$DG_DIR/run/src" "$DG_DIR/run/src.img" 1G ||
		! qemu-img create -q -f qcow2 -b "$DG_DIR/root.img" -F raw "$DG_DIR/run/root.qcow2"; then
		tap 1 "run disks created"
		return 1
	fi
	rm -rf "$DG_DIR/run/src" "$DG_DIR/run/host-src"
	for n in 1 2; do
		t=$(date +%s) rc=0
		dg_boot "$n" || rc=$?
		echo "# boot $n: $(($(date +%s) - t)) s (qemu status $rc)"
		dg_results "$DG_DIR/logs/boot$n.log"
		if [[ $n == 1 ]] && grep -aq '^FZG: reboot' "$DG_DIR/logs/boot1.log"; then
			tap 0 "boot 1: guest ran its steps and rebooted"
		elif [[ $n == 2 ]] && grep -aq '^FZG: done' "$DG_DIR/logs/boot2.log"; then
			tap 0 "boot 2: guest ran its steps and powered off"
		else
			tap 1 "boot $n: guest ran its steps" \
				"$( ((rc == 124)) && echo "TIMEOUT after $DG_TIMEOUT s" || echo "qemu status $rc") (log: $DG_DIR/logs/boot$n.log)"
			break
		fi
	done
	rm -f "$DG_DIR/run/src.img" "$DG_DIR/run/root.qcow2"
	echo "# total $(($(date +%s) - t0)) s"
	return "$DG_FAILED"
}

# ---------- guest: the steps ----------

G_STATE=/var/lib/fz-guest

g_ok() { echo "FZG: ok - $1"; }
g_fail() { echo "FZG: not ok - $1${2:+ # $2}"; }
g_note() { echo "FZG: # $*"; }

# g_check NAME CMD...: one counted step; the command's output goes to the log.
g_check() {
	local name=$1 rc=0
	shift
	echo "FZG-step: $name ($(date +%T), uptime $(cut -d' ' -f1 /proc/uptime) s)"
	"$@" || rc=$?
	if ((rc == 0)); then g_ok "$name"; else g_fail "$name" "exit $rc"; fi
	return "$rc"
}

# g_readme TEXT: the docs' first indented command line that starts with TEXT
# (README.md first, then docs/*.md: tests/doccheck.sh checks each is there),
# run verbatim (one step), from the checkout.
g_readme() {
	local line
	line=$(awk -v p="$1" 'substr($0, 1, 4) == "    " && index(substr($0, 5), p) == 1 {
		print substr($0, 5); exit }' /src/README.md /src/docs/*.md)
	if [[ -z $line ]]; then
		g_fail "README: $1" "no such command line in README.md or docs/*.md"
		return 1
	fi
	g_check "README: $line" bash -c "$line"
}

# g_snapshot: what make install/uninstall can touch, one path per line.
g_snapshot() {
	find /etc/modprobe.d /etc/modules-load.d /etc/udev /usr/lib/modules /usr/lib/udev \
		-xdev \( -type f -o -type l \) 2>/dev/null | grep -v '/modules\.[a-z.]*$' | sort
}

g_param() { cat "/sys/module/fastzero/parameters/$1" 2>/dev/null; }
g_policy() { cat "/sys/class/misc/fastzero/policy/$1" 2>/dev/null; }
g_loaded() { [[ -d /sys/module/fastzero ]]; }
g_dev_ok() { [[ -c /dev/fastzero && $(stat -c %a /dev/fastzero) == 666 ]]; }
# g_pkg_module_ok VERSION: modprobe loads the package's DKMS module, that version.
g_pkg_module_ok() {
	modprobe fastzero && modinfo -F filename fastzero | grep -q /updates/dkms/ &&
		[[ $(cat /sys/module/fastzero/version) == "$1" ]] && g_dev_ok
}
g_reload_chunk() { modprobe -r fastzero && modprobe fastzero && [[ $(g_param chunk_size) == 65536 ]]; }

# g_modinfo_fields VERSION MODINFO: version, a description and an author.
g_modinfo_fields() {
	grep -qx "version: *$1" <<<"$2" && grep -q '^description: *.' <<<"$2" &&
		grep -q '^author: *.' <<<"$2"
}

# g_modinfo_parms MODINFO: six parameters, each "name:description (type)".
g_modinfo_parms() {
	[[ $(grep -c '^parm:' <<<"$1") -ge 6 ]] && ! grep '^parm:' <<<"$1" | grep -qvE '^parm: *[a-z_]+:[^ (]'
}

g_stage1() {
	local k1 v out
	k1=$(uname -r)
	v=$(dkms_version .)
	g_note "boot 1: Debian $(cat /etc/debian_version), kernel $k1, fastzero $v, cpu: $(grep -o -w -e erms -e rep_good -e fsrm /proc/cpuinfo | sort -u | tr '\n' ' ')"
	# The README, as a new user runs it.
	g_readme 'make && sudo insmod driver/fastzero.ko'
	g_check "/dev/fastzero is a character device, mode 0666" g_dev_ok
	g_readme 'dd if=/dev/fastzero of=/dev/null bs=1M'
	g_readme 'fio --filename=/dev/fastzero fio-jobs/'
	out=$(g_readme 'cat /sys/class/misc/fastzero/policy/clear_user_variant')
	printf '%s\n' "$out"
	g_check "clear_user_variant is a variant name ($(g_policy clear_user_variant))" \
		grep -qxE 'unrolled|rep_stosq|erms' <<<"$(g_policy clear_user_variant)"
	g_check "rmmod fastzero" rmmod fastzero
	# modinfo: version from dkms.conf, description, author, every parameter described.
	out=$(modinfo driver/fastzero.ko)
	printf '%s\n' "$out"
	g_check "modinfo: version $v (dkms.conf), description, author" g_modinfo_fields "$v" "$out"
	g_check "modinfo: every parameter has a description" g_modinfo_parms "$out"
	# Signing by hand with a generated key (docs/install.md's Secure Boot).
	g_readme 'openssl req -new -x509'
	# shellcheck disable=SC2016 # the README's text, expanded by the guest's bash
	g_readme '/usr/src/linux-headers-$(uname -r)/scripts/sign-file'
	out=$(g_readme 'modinfo -F signer driver/fastzero.ko')
	printf '%s\n' "$out"
	g_check "modinfo -F signer shows the generated key" grep -q '^fastzero' <<<"$(modinfo -F signer driver/fastzero.ko)"
	rm -f key.priv key.der
	# make install and uninstall (depmod takes a minute under TCG each).
	g_snapshot >"$G_STATE/before-install"
	g_readme 'make install AUTOLOAD=1'
	g_check "modprobe fastzero (make install's module)" \
		bash -c 'modprobe fastzero && modinfo -F filename fastzero | grep -q /updates/driver/ && [[ -c /dev/fastzero ]]'
	g_check "modprobe -r fastzero" bash -c 'modprobe -r fastzero && ! [[ -e /sys/module/fastzero ]]'
	comm -13 "$G_STATE/before-install" <(g_snapshot) >"$G_STATE/installed"
	g_note "make install wrote: $(tr '\n' ' ' <"$G_STATE/installed")"
	g_check "make install wrote the module, the udev rule, modprobe.d and modules-load.d files" \
		test "$(grep -c -e '/updates/driver/fastzero.ko' -e '/etc/udev/rules.d/60-fastzero.rules$' \
			-e '/etc/modprobe.d/fastzero.conf$' -e '/etc/modules-load.d/fastzero.conf$' \
			"$G_STATE/installed")" = 4
	g_readme 'make uninstall'
	g_check "make uninstall removed everything make install wrote (and only that)" \
		diff "$G_STATE/before-install" <(g_snapshot)
	g_check "depmod ran: modprobe no longer finds fastzero" bash -c '! modprobe -n fastzero'
	out=$(make bench QUICK=1 2>&1)
	printf '%s\n' "$out"
	g_check "make bench QUICK=1 ran in native mode" grep -q 'MODE: NATIVE' <<<"$out"
	g_check "make bench QUICK=1 wrote its CSV" bash -c 'ls results/*-native.csv'
	g_check "make bench left the module unloaded" bash -c '! [[ -e /sys/module/fastzero ]]'
	g_packages_install
	echo 2 >"$G_STATE/stage"
	echo "FZG: reboot"
	systemctl --no-block reboot
}

g_stage2() {
	g_note "boot 2: kernel $(uname -r)"
	g_check "modules-load.d: the package's fastzero loaded at boot" \
		bash -c 'journalctl -b -u systemd-modules-load --no-pager | grep -i fastzero; [[ -d /sys/module/fastzero ]] &&
			modinfo -F filename fastzero | grep -q /updates/dkms/'
	ls -l /dev/fastzero
	g_check "/dev/fastzero at boot: a character device, mode 0666" g_dev_ok
	udevadm test --action=add /sys/class/misc/fastzero >/tmp/udevadm-test 2>&1
	grep -i fastzero /tmp/udevadm-test
	g_check "udev applies the package's /usr/lib/udev/rules.d/60-fastzero.rules to /dev/fastzero" \
		grep -q '/usr/lib/udev/rules.d/60-fastzero.rules:[0-9]* MODE 0666' /tmp/udevadm-test
	g_check "modprobe.d honoured at boot: chunk_size $(g_param chunk_size) = 65536" \
		test "$(g_param chunk_size)" = 65536
	g_check "modprobe -r; modprobe: chunk_size 65536 again" g_reload_chunk
	g_packages_use
	echo "FZG: done"
	systemctl --no-block poweroff
}

# ---------- guest: the Debian packages (/src/fz-debs/{a,b}: dg_debs) ----------

G_STATS=/sys/class/misc/fastzero/stats
G_GO=/tmp/fz-go

g_stat() { cat "$G_STATS/$1" 2>/dev/null || echo 0; }

# g_fs_snapshot: every file and link a package could leave behind, one per
# line: not the volatile trees, dpkg's and apt's records, depmod's indexes.
# DKMS's own module signing key (/var/lib/dkms/mok.*), made at its first
# build for every DKMS package, is DKMS's state, kept by design.
g_fs_snapshot() {
	find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /src -o -path /root -o -path /var/log -o -path /var/cache \
		-o -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/systemd \
		-o -path "$G_STATE" \) -prune -o \( -type f -o -type l \) -print 2>/dev/null |
		grep -v -e '/modules/[^/]*/modules\.[a-z.]*$' -e '/__pycache__/' \
			-e '^/var/lib/dkms/mok\.\(key\|pub\)$' | sort
}

# g_debs_files: the files and links of the second kernel's header .debs
# (also under /usr for /lib, /bin, /sbin: the guest's / is merged).
g_debs_files() {
	local f
	for f in "$DG_DEBS"/*.deb; do dpkg-deb -c "$f"; done |
		awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print p; if (p ~ /^\/(lib|bin|sbin)\//) print "/usr" p }'
}

# g_fs_changed: comm -3 of before-deb and the file system now, without the
# second kernel's headers, which g_packages installs in between on purpose.
g_fs_changed() {
	comm -3 "$G_STATE/before-deb" <(g_fs_snapshot) |
		grep -vxFf <(g_debs_files | sed 's/^/\t/; p; s/^\t//')
}

# g_dkms_has VERSION KVER: DKMS has fastzero VERSION installed for KVER.
g_dkms_has() { dkms status fastzero | grep -q "^fastzero/$1, $2, x86_64: installed"; }
# g_upgraded NEW KVER OLD: DKMS has NEW for KVER and nothing of OLD.
g_upgraded() { g_dkms_has "$1" "$2" && ! dkms status fastzero | grep -q "^fastzero/$3,"; }
# g_headers_dkms VERSION KVER: the offline headers .debs install, DKMS builds for KVER.
g_headers_dkms() { dpkg -i "$DG_DEBS"/*.deb && g_dkms_has "$1" "$2"; }

# g_via NAME STAT MIN CMD: one step; CMD succeeds and the device's counter
# STAT grew by at least MIN: what CMD read came through fastzero.
g_via() {
	local name=$1 stat=$2 min=$3 c0 rc=0
	shift 3
	c0=$(g_stat "$stat")
	bash -c "$*" || rc=$?
	g_note "$name: exit $rc, $stat +$(($(g_stat "$stat") - c0))"
	g_check "$name" test "$rc" = 0 -a "$(($(g_stat "$stat") - c0))" -ge "$min"
}

# The holders an upgrade finds: each checks its zeros, says it is ready,
# and checks again when its fifo $G_GO/NAME is written to; exit 0 if both
# checks passed.  fd: an open descriptor; shared: a shared mapping with a
# page written; pipe: spliced zeros waiting in a pipe (pv, which splices,
# writes them; nothing reads them before the upgrade).
G_HOLDER='
import mmap, os, sys
kind, go, n = sys.argv[1], sys.argv[2], 1 << 20
if kind == "fd":
    fd = os.open("/dev/fastzero", os.O_RDONLY)
    check = lambda: os.read(fd, n) == bytes(n)
elif kind == "shared":
    fd = os.open("/dev/fastzero", os.O_RDWR)
    m = mmap.mmap(fd, 4 * n, mmap.MAP_SHARED)
    os.close(fd)
    m[:n] = b"Z" * n
    check = lambda: m[:n] == b"Z" * n and m[n:] == bytes(3 * n)
else:
    check = lambda: sys.stdin.buffer.read(64 * n) == bytes(64 * n)
ok = kind == "pipe" or check()
open(go + ".ready", "w").close()
open(go).read()
sys.exit(0 if ok and check() else 1)
'

# g_holders_wait: write every holder's fifo, wait for it: 0 if all passed.
g_holders_wait() {
	local k rc=0 left
	for k in fd shared pipe; do
		# a holder that died has no reader on its fifo: do not block on it
		# shellcheck disable=SC2016 # $1 is the inner shell's
		timeout 30 sh -c 'echo >"$1"' _ "$G_GO/$k"
		wait "${G_HOLDER_PID[$k]}" || { rc=1; g_note "holder $k failed"; }
	done
	mapfile -t left < <(jobs -p)
	((${#left[@]} == 0)) || kill "${left[@]}" 2>/dev/null
	wait
	return "$rc"
}

g_holders_ready() {
	for _ in $(seq 120); do
		[[ -e $G_GO/fd.ready && -e $G_GO/shared.ready && -e $G_GO/pipe.ready ]] && return 0
		sleep 0.5
	done
	return 1
}

# g_unit_run UNIT: start the oneshot unit; its output file's lines.
g_unit_run() { rm -f /run/fz-zero-demo; systemctl start "$1" && cat /run/fz-zero-demo; }

# g_packages_install (boot 1): the .debs installed with apt, DKMS building
# on install, the module loaded; then what an administrator does to load it
# at every boot with an option (docs/packaging.md): boot 2 checks it.
g_packages_install() {
	local a=/src/fz-debs/a b=/src/fz-debs/b v v2 k1
	k1=$(uname -r)
	v=$(dpkg-deb -f "$(compgen -G "$a/fastzero-dkms_*.deb")" Version 2>/dev/null)
	v2=$(dpkg-deb -f "$(compgen -G "$b/fastzero-dkms_*.deb")" Version 2>/dev/null)
	g_check "the host's .debs are here: fastzero $v, and $v2" test -n "$v" -a -n "$v2"
	g_fs_snapshot >"$G_STATE/before-deb"
	# Only the running kernel's headers: the second kernel's come in boot 2.
	g_check "apt install ./fastzero-dkms_${v}_all.deb ./fastzero-tools_${v}_amd64.deb (offline)" \
		apt-get install -y --no-install-recommends "$a"/fastzero-dkms_*.deb "$a"/fastzero-tools_*.deb
	dkms status
	g_check "the package's DKMS built and installed fastzero $v for $k1" g_dkms_has "$v" "$k1"
	g_check "modprobe fastzero: the package's module, /dev/fastzero 0666, version $v" \
		g_pkg_module_ok "$v"
	g_readme 'echo fastzero >/etc/modules-load.d/fastzero.conf'
	sed -i 's/^#options fastzero chunk_size=.*/options fastzero chunk_size=65536/' /etc/modprobe.d/fastzero.conf
	g_check "modprobe.d: chunk_size=65536 set in the package's example" \
		grep -qx 'options fastzero chunk_size=65536' /etc/modprobe.d/fastzero.conf
}

# g_packages_use (boot 2): an upgrade while the module is in use, DKMS for
# a second kernel, unmodified programs through fastzero-run, a systemd
# drop-in, remove and purge.
g_packages_use() {
	local a=/src/fz-debs/a b=/src/fz-debs/b v v2 k1 k2 out f zsum
	local -A G_HOLDER_PID
	export -f g_dev_ok g_dkms_has g_unit_run
	k1=$(uname -r)
	f=$(compgen -G "$DG_DEBS/linux-headers-*-amd64_*.deb" | head -n1)
	k2=$(basename "$f" | sed 's/^linux-headers-//; s/_.*//')
	v=$(dpkg-deb -f "$(compgen -G "$a/fastzero-dkms_*.deb")" Version 2>/dev/null)
	v2=$(dpkg-deb -f "$(compgen -G "$b/fastzero-dkms_*.deb")" Version 2>/dev/null)
	echo "fz-guest: packages-begin" >/dev/kmsg
	# An upgrade while the module is in use.
	rm -rf "$G_GO" && mkdir -p "$G_GO" && mkfifo "$G_GO/fd" "$G_GO/shared" "$G_GO/pipe"
	python3 -c "$G_HOLDER" fd "$G_GO/fd" & G_HOLDER_PID[fd]=$!
	python3 -c "$G_HOLDER" shared "$G_GO/shared" & G_HOLDER_PID[shared]=$!
	pv -q /dev/fastzero | python3 -c "$G_HOLDER" pipe "$G_GO/pipe" & G_HOLDER_PID[pipe]=$!
	g_check "three holders: /dev/fastzero open, mapped shared, spliced into a pipe" g_holders_ready
	sleep 2
	out=$(apt-get install -y --no-install-recommends "$b"/fastzero-dkms_*.deb "$b"/fastzero-tools_*.deb 2>&1)
	printf '%s\n' "$out"
	g_check "apt install of $v2 over $v, the module in use: completes" \
		g_upgraded "$v2" "$k1" "$v"
	g_check "the upgrade says $v is still loaded and how to reload" \
		grep -q "version $v is still loaded" <<<"$out"
	g_check "every holder still reads what it should (zeros, its own page)" g_holders_wait
	g_check "modprobe -r; modprobe: version $v2 runs" \
		bash -c "modprobe -r fastzero && modprobe fastzero && [[ \$(cat /sys/module/fastzero/version) == '$v2' ]]"
	# A second kernel's headers, installed later: DKMS builds for it too.
	g_check "dpkg -i linux-headers-$k2 and its dependencies (offline .debs): DKMS builds the package's fastzero for it too" \
		g_headers_dkms "$v2" "$k2"
	f=$(compgen -G "/lib/modules/$k2/updates/dkms/fastzero.ko*" | head -n1)
	g_check "the $k2 module's vermagic is $k2" \
		grep -q "^$k2 " <<<"$(modinfo -F vermagic "${f:-/nonexistent}")"
	# Unmodified programs, /dev/zero by name, through fastzero-run.
	# 256 MiB compared: under TCG cmp takes a minute a GiB.
	g_via "fastzero-run dd if=/dev/zero bs=1M count=256 | cmp with the stock /dev/zero" read_bytes $((256 << 20)) \
		'fastzero-run dd if=/dev/zero bs=1M count=256 status=none | cmp -n 268435456 - /dev/zero'
	g_via "fastzero-run head -c 256M /dev/zero | cmp with the stock /dev/zero" read_bytes $((256 << 20)) \
		'fastzero-run head -c 256M /dev/zero | cmp -n 268435456 - /dev/zero'
	g_via "fastzero-run pv -q -S -s 4G /dev/zero >/dev/null (pv reads: it splices only into a pipe)" read_bytes $((4 << 30)) \
		'fastzero-run pv -q -S -s 4G /dev/zero >/dev/null'
	g_via "fastzero-run pv -q -S -s 256M /dev/zero | cmp with the stock /dev/zero" read_bytes $((256 << 20)) \
		'fastzero-run pv -q -S -s 256M /dev/zero | cmp -n 268435456 - /dev/zero'
	g_via "fastzero-run stress-ng --zero 2 --verify -t 5" read_bytes 1 \
		'fastzero-run stress-ng --zero 2 --verify -t 5 --metrics-brief'
	g_via "fastzero-run fio --filename=/dev/zero --rw=read --bs=1M --size=1G" read_bytes $((1 << 30)) \
		'fastzero-run fio --name=zero --filename=/dev/zero --rw=read --bs=1M --size=1G --ioengine=psync'
	g_via "fastzero-run python3: mmap of /dev/zero, private" private_maps 1 \
		"fastzero-run python3 -c 'import mmap, os; fd = os.open(\"/dev/zero\", os.O_RDWR); m = mmap.mmap(fd, 64 << 20, mmap.MAP_PRIVATE); assert m[:] == bytes(64 << 20); m[:5] = b\"hello\"; assert m[:5] == b\"hello\" and m[5:] == bytes((64 << 20) - 5)'"
	g_via "fastzero-run python3: mmap of /dev/zero, shared" shared_maps 1 \
		"fastzero-run python3 -c 'import mmap, os; fd = os.open(\"/dev/zero\", os.O_RDWR); m = mmap.mmap(fd, 64 << 20, mmap.MAP_SHARED); assert m[:] == bytes(64 << 20); m[-5:] = b\"hello\"; assert m[-5:] == b\"hello\" and m[:-5] == bytes((64 << 20) - 5); assert \"/dev/fastzero\" in open(\"/proc/self/maps\").read()'"
	# A real systemd service, through the drop-in, and undone.
	cat >/etc/systemd/system/fz-zero-demo.service <<'UNIT'
[Unit]
Description=fastzero test: a service that reads /dev/zero by name

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'stat -Lc %%t:%%T /dev/zero >/run/fz-zero-demo; head -c 64M /dev/zero | cksum >>/run/fz-zero-demo'
UNIT
	zsum=$(head -c 64M /dev/zero | cksum)
	g_check "fastzero-run --install-dropin fz-zero-demo" fastzero-run --install-dropin fz-zero-demo
	g_via "the service with the drop-in reads fastzero (device 10:N, 64 MiB of zeros)" read_bytes $((64 << 20)) \
		"out=\$(g_unit_run fz-zero-demo.service); echo \"\$out\"; [[ \$out == a:*'$zsum' ]]"
	g_check "fastzero-run --remove-dropin fz-zero-demo" fastzero-run --remove-dropin fz-zero-demo
	out=$(g_unit_run fz-zero-demo.service)
	printf '%s\n' "$out"
	g_check "without the drop-in the service reads the stock /dev/zero (1:5)" \
		test "$(head -n1 <<<"$out")" = 1:5 -a "$(tail -n1 <<<"$out")" = "$zsum"
	rm -f /etc/systemd/system/fz-zero-demo.service
	rmdir /etc/systemd/system/fz-zero-demo.service.d 2>/dev/null
	systemctl daemon-reload
	out=$(dmesg | sed -n '/fz-guest: packages-begin/,$p' |
		grep -E 'BUG:|WARNING:|Oops|general protection|Call Trace' || true)
	printf '%s\n' "$out"
	g_check "dmesg clean through the upgrade and the programs" test -z "$out"
	# remove, then purge; the administrator's modules-load.d line goes first.
	rm -f /etc/modules-load.d/fastzero.conf
	g_check "modprobe -r fastzero; apt remove fastzero-dkms fastzero-tools" \
		bash -c 'modprobe -r fastzero && apt-get remove -y fastzero-dkms fastzero-tools'
	out=$(g_fs_changed)
	g_note "after apt remove, not as before: $(tr '\n' ' ' <<<"$out")"
	g_check "apt remove left only the conffile /etc/modprobe.d/fastzero.conf" \
		test "$(tr -d '\t' <<<"$out")" = /etc/modprobe.d/fastzero.conf
	g_check "apt remove: DKMS has no fastzero for any kernel" bash -c '! dkms status fastzero | grep -q .'
	g_check "apt purge fastzero-dkms fastzero-tools" apt-get purge -y fastzero-dkms fastzero-tools
	out=$(g_fs_changed)
	g_note "after apt purge, not as before: $(tr '\n' ' ' <<<"$out")"
	g_check "apt purge left the file system as before the install" test -z "$out"
}

g_main() {
	export HOME=/root LC_ALL=C.UTF-8 TERM=dumb
	mkdir -p "$G_STATE"
	cd /src || { echo "FZG: not ok - /src mounted"; systemctl --no-block poweroff; exit 1; }
	if [[ $(cat "$G_STATE/stage" 2>/dev/null) == 2 ]]; then g_stage2; else g_stage1; fi
}

case ${1:-} in
--build)
	fz_lock debian-guest
	dg_build_image
	;;
--host)
	fz_lock debian-guest
	mkdir -p "$DG_DIR/run"
	DG_FAILED=0
	dg_host_checks
	rm -rf "$DG_DIR/run/host-src"
	exit "$DG_FAILED"
	;;
--guest)
	g_main
	;;
'')
	dg_main
	;;
*)
	sed -n '4,6p' "$0" >&2
	exit 2
	;;
esac
