# SPDX-License-Identifier: GPL-2.0
# Makefile - fastzero's entry points (`make help` prints this):
#
#   make, make all    driver/fastzero.ko for KDIR, and the userspace tools
#   make help         this text
#   make kdir         the kernel build tree make builds for, and why
#   make check        the test suite in QEMU on Debian's 6.1, 6.12 and 7.x
#   make bench        /dev/fastzero vs /dev/zero: table, CSV and plot (root)
#   make microbench   the driver's clear loops timed in userspace, natively
#   make calibrate    this machine's erms_threshold and nt_threshold, measured,
#                     and the modprobe.d line (CALIBRATE_INSTALL=1: install it)
#   make model        /dev/zero measured and emulated, fastzero emulated, here
#   make lint         checkpatch --strict, sparse, cppcheck, shellcheck, and
#                     the docs against the code (tests/doccheck.sh)
#   make results-table  README.md's table of measured results, and the
#                     results/ files included in docs/*.md, from results/
#   make install      the module for KDIR's kernel (+ depmod), the udev rule,
#                     the commented modprobe.d example; AUTOLOAD=1 also
#                     /etc/modules-load.d/fastzero.conf (load at boot)
#   make uninstall    remove exactly those files (FZ_INSTALLED), depmod
#   make dkms-install    dkms install .: the running kernel, later ones by itself
#   make dkms-uninstall  dkms remove, from every kernel, and its /usr/src copy
#   make deb          fastzero-dkms and fastzero-tools .debs in build/deb/
#                     (debian/make-deb.sh: dpkg-buildpackage -b, lintian);
#                     FZ_DEB_ARCH=arm64: fastzero-tools cross-built for
#                     arm64 in build/deb-arm64/ (dpkg-buildpackage -a arm64)
#   make upstream     the /dev/zero kernel postings (docs/upstream.md): build/upstream/out/TREE
#                     generated from upstream/series, signed off by you (git's
#                     user.name/user.email, or UPSTREAM_IDENT="Name <address>"),
#                     checkpatch --strict, git am onto Debian's 7.2 and 7.3
#                     sources (UPSTREAM_BUILD=1: also
#                     a W=1 build of the touched objects after each patch;
#                     UPSTREAM_MODEL=1: also /dev/zero's read() before and after,
#                     timed on this CPU, mode native userspace)
#   make clean        remove what make built (KDIR's kbuild files, userspace/
#                     build/, the suite's programs)
#
# Variables (a wrong value is refused before anything runs):
#   KDIR=DIR          the kernel build tree make, make install and make clean
#                     use (default: the running kernel's, else the newest
#                     generic /usr/src/linux-headers-*-amd64, else the newest
#                     -rt or -cloud one; make says which, and why)
#   QUICK=1           the short run of bench, microbench, calibrate, model
#                     (0 or unset: the full one)
#   KERNEL=ID         make bench's guest kernel where it runs a VM (default
#                     6.12; FZ_BENCH_KERNEL is the same); the ids are below
#   AUTOLOAD=1        make install: load the module at every boot
#   DESTDIR, INSTALL_MOD_PATH  install/uninstall under another root
#   make bench's others: FZ_BENCH_MODE, FZ_BENCH_CPU, FZ_BENCH_MEM,
#   FZ_BENCH_MMAP, FZ_BENCH_UNROLLED, FZ_RESULTS (docs/benchmarks.md);
#   make check's: FZ_KERNELS, FZ_CPUS, FZ_ONLY (docs/testing.md)
#
# install/uninstall honour DESTDIR (and INSTALL_MOD_PATH, default DESTDIR).
# The module itself follows the Kbuild convention:
#   make -C <kernel build dir> M=$PWD modules

# The running kernel's build tree, else the newest Debian headers installed
# of the generic flavour (the rt and cloud ones sort after it), else of any.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	  $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | \
		  awk '/-(rt|cloud)-amd64$$/ { f = $$0; next } { g = $$0 } \
		       END { if (g != "" || f != "") print (g != "" ? g : f) }'))

# fastzero's version: dkms.conf's PACKAGE_VERSION (driver/Kbuild reads it too).
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$$/\1/p' $(CURDIR)/dkms.conf)

# KDIR's kernel release, as its vermagic says (Debian's 6.1 headers carry a
# different include/config/kernel.release).
KVER = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	 $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
# Why KDIR is the one make builds for, said in one line: a module for
# another kernel than the running one is refused by insmod here.
RUNNING := $(shell uname -r)
KDIR_WHY = $(if $(filter command line environment,$(origin KDIR)),KDIR given, \
	$(if $(filter $(RUNNING),$(KVER)),the running kernel, \
	the newest headers installed, since the running kernel $(RUNNING) has none: \
	insmod here refuses this module (apt install linux-headers-$(RUNNING), or KDIR=)))

DESTDIR ?=
INSTALL_MOD_PATH ?= $(DESTDIR)
MODDIR = $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/updates/driver
UDEV_RULE := $(DESTDIR)/etc/udev/rules.d/60-fastzero.rules
MODPROBE_CONF := $(DESTDIR)/etc/modprobe.d/fastzero.conf
MODLOAD_CONF := $(DESTDIR)/etc/modules-load.d/fastzero.conf
# Everything `make install` can write (modules_install compresses the module
# as the kernel's config says), and so everything `make uninstall` removes.
FZ_INSTALLED = $(MODDIR)/fastzero.ko $(addprefix $(MODDIR)/fastzero.ko,.xz .zst .gz) \
	       $(UDEV_RULE) $(MODPROBE_CONF) $(MODLOAD_CONF)

# Kbuild signs at modules_install when CONFIG_MODULE_SIG_ALL=y, with the
# kernel's own key: distribution headers do not have it (sign by hand or
# with DKMS's MOK key instead, see docs/install.md), so skip it rather than fail noisily.
NOSIGN = $(if $(wildcard $(KDIR)/certs/signing_key.pem),,CONFIG_MODULE_SIG_ALL=)

# Bad input is refused before anything is built or written, with one line.
goals := $(or $(MAKECMDGOALS),all)
# The kernel ids make bench (and make check) can boot: tests/vm/kernels.sh's.
KERNEL_IDS = $(shell sed -n "s/^FZ_KERNEL_IDS='\(.*\)'$$/\1/p" $(CURDIR)/tests/vm/kernels.sh)
ifneq ($(filter-out 0 1,$(QUICK)),)
$(error fastzero: QUICK=$(QUICK): 1 (the short run) or 0 (the full one))
endif
ifneq ($(filter-out 0 1,$(UPSTREAM_BUILD) $(UPSTREAM_MODEL)),)
$(error fastzero: UPSTREAM_BUILD and UPSTREAM_MODEL take 1 or 0)
endif
ifneq ($(filter bench,$(goals)),)
# run-bench.sh checks its variables itself, in seconds: one line each
bench_bad := $(shell QUICK='$(QUICK)' KERNEL='$(KERNEL)' FZ_BENCH_KERNEL='$(FZ_BENCH_KERNEL)' \
	FZ_BENCH_MODE='$(FZ_BENCH_MODE)' FZ_BENCH_UNROLLED='$(FZ_BENCH_UNROLLED)' \
	FZ_BENCH_MEM='$(FZ_BENCH_MEM)' FZ_BENCH_MMAP='$(FZ_BENCH_MMAP)' \
	$(CURDIR)/userspace/bench/run-bench.sh --check-vars 2>&1 | sed 's/^make bench: //' | paste -sd ';')
ifneq ($(bench_bad),)
$(error fastzero: $(bench_bad))
endif
else ifneq ($(filter command line,$(origin KERNEL)),)
$(error fastzero: KERNEL=$(KERNEL) picks make bench's guest kernel ($(KERNEL_IDS)) only; make builds the module for KDIR (a kernel build tree: KDIR=/lib/modules/<release>/build), make check boots FZ_KERNELS)
endif
ifneq ($(filter all module install uninstall,$(goals)),)
ifeq ($(and $(KDIR),$(wildcard $(KDIR)/Makefile)),)
$(error fastzero: no kernel headers$(if $(KDIR), in KDIR=$(KDIR)): install linux-headers-$(shell uname -r), or set KDIR)
endif
endif
# Kernels that generate BTF for modules (Debian 12's 6.12) run pahole on each.
ifneq ($(and $(filter all module install,$(goals)),$(wildcard $(KDIR)/vmlinux)),)
ifneq ($(shell grep -sx CONFIG_DEBUG_INFO_BTF_MODULES=y $(KDIR)/.config),)
ifeq ($(shell command -v pahole),)
$(error fastzero: $(KDIR) makes BTF for modules, which needs pahole: apt install dwarves)
endif
endif
endif
ifneq ($(filter install uninstall dkms-install dkms-uninstall,$(goals)),)
ifeq ($(DESTDIR)$(filter 0,$(shell id -u)),)
$(error fastzero: make $(filter install uninstall dkms-install dkms-uninstall,$(goals)) writes to /lib/modules and /etc: run it as root)
endif
endif
ifneq ($(filter bench,$(goals)),)
ifneq ($(shell id -u),0)
$(error fastzero: make bench runs as root (it loads the module, or boots a VM and installs what that needs): sudo make bench)
endif
endif

# depmod for KVER, where that kernel is installed (not into an empty
# DESTDIR: packaging runs depmod when the package is installed).
DEPMOD = $(if $(wildcard $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/modules.dep), \
	 depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KVER), \
	 @echo "no $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/modules.dep: depmod skipped")

.PHONY: all help kdir module userspace check bench microbench calibrate model lint results-table \
	install uninstall dkms-install dkms-uninstall deb upstream clean

all: module userspace

# The header above, and the kernel ids.
help:
	@sed -n '3,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
	@echo "Kernel ids (KERNEL=, FZ_BENCH_KERNEL=, FZ_KERNELS=): $(KERNEL_IDS)"

# In parallel (one job per CPU) unless make was given -j itself.
kdir:
	@echo "$(KDIR): $(strip $(KDIR_WHY))"

module:
	@echo "fastzero: building for $(KVER) ($(KDIR)): $(strip $(KDIR_WHY))"
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc)) modules

userspace:
	$(MAKE) -C userspace all

check:
	tests/vm/check.sh

bench:
	$(MAKE) -C userspace bench

microbench:
	$(MAKE) -C userspace microbench

calibrate:
	$(MAKE) -C userspace calibrate

model:
	$(MAKE) -C userspace model

lint:
	tests/lint.sh

results-table:
	tests/results-table.sh --update

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) KERNELRELEASE=$(KVER) INSTALL_MOD_DIR=updates \
		$(if $(INSTALL_MOD_PATH),INSTALL_MOD_PATH=$(INSTALL_MOD_PATH)) $(NOSIGN) modules_install
	$(DEPMOD)
	install -D -m 0644 udev/60-fastzero.rules $(UDEV_RULE)
	install -D -m 0644 modprobe.d/fastzero.conf $(MODPROBE_CONF)
ifeq ($(AUTOLOAD),1)
	install -d $(dir $(MODLOAD_CONF))
	echo fastzero >$(MODLOAD_CONF)
endif
	@echo "fastzero $(VERSION) installed for $(KVER): modprobe fastzero$(if $(filter 1,$(AUTOLOAD)),; it loads at boot)"

uninstall:
	rm -f $(FZ_INSTALLED)
	rmdir $(MODDIR) $(dir $(MODDIR)) 2>/dev/null || true
	$(DEPMOD)

# DKMS: build and install for the running kernel, and again by itself for
# every kernel installed later (dkms.conf: AUTOINSTALL, which kernels).
dkms-install:
	dkms install $(CURDIR)

dkms-uninstall:
	dkms remove fastzero/$(VERSION) --all
	rm -rf /usr/src/fastzero-$(VERSION)

# Debian packages, built the Debian way in a copy of the tree (docs/packaging.md).
deb:
	debian/make-deb.sh

# The upstream series: regenerated from its stack and checked (upstream/series.sh).
upstream:
	upstream/series.sh $(if $(filter 1,$(UPSTREAM_BUILD)),--build) \
		$(if $(filter 1,$(UPSTREAM_MODEL)),--model)

clean:
	$(if $(KDIR),$(MAKE) -C $(KDIR) M=$(CURDIR) clean)
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/suite clean
