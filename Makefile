# SPDX-License-Identifier: GPL-2.0
# Makefile - fastzero's entry points: all, check, bench, microbench, lint, install, clean.
#
#   make              driver/fastzero.ko for KDIR, and the userspace tools
#   make check        the test suite in QEMU on Debian's 6.1, 6.12 and 7.x
#   make bench        /dev/fastzero vs /dev/zero: table, CSV and plot
#   make microbench   the driver's clear loops timed in userspace, natively
#   make lint         checkpatch --strict and shellcheck
#   make install      install the module for KDIR's kernel
#
# The module itself follows the Kbuild convention:
#   make -C <kernel build dir> M=$PWD modules

# The running kernel's build tree, else the newest Debian headers installed.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	  $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1))

.PHONY: all module userspace check bench microbench lint install clean

all: module userspace

module:
	@test -n "$(KDIR)" || { echo "no kernel headers: set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

userspace:
	$(MAKE) -C userspace all

check:
	tests/vm/check.sh

bench:
	$(MAKE) -C userspace bench

microbench:
	$(MAKE) -C userspace microbench

lint:
	tests/lint.sh

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install

clean:
	$(if $(KDIR),$(MAKE) -C $(KDIR) M=$(CURDIR) clean)
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/suite clean
