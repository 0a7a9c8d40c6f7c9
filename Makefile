# SPDX-License-Identifier: GPL-2.0
# fastzero: build the module and tools; `make check` tests in QEMU, `make bench` measures.

KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	  $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1))

.PHONY: all module clean check
all: module

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
