/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's <linux/sizes.h> constants that driver/policy.h uses, for
 * the userspace programs that compile it (-I userspace/shim): the same
 * values, one copy.
 */
#ifndef _FASTZERO_SHIM_SIZES_H
#define _FASTZERO_SHIM_SIZES_H

#define SZ_16K			0x00004000
#define SZ_64K			0x00010000
#define SZ_1M			0x00100000
#define SZ_32M			0x02000000
#define SZ_64M			0x04000000
#define SZ_256M			0x10000000

#endif /* _FASTZERO_SHIM_SIZES_H */
