# SPDX-License-Identifier: GPL-2.0-only
#
# One version for the command, the library, the module's DKMS package and
# the Debian packages: the command's (TAILOR_VERSION in cli/cli.h).  The
# shared library's soname changes only when libtailor's ABI breaks; its
# file carries the version after it.  Included by Makefile and
# userspace/Makefile.
VERSION_MK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
VERSION := $(shell sed -n 's/^\#define TAILOR_VERSION[^"]*"\([^"]*\)"/\1/p' $(VERSION_MK_DIR)cli/cli.h)
LIBTAILOR_SONAME := libtailor.so.0
LIBTAILOR_REAL := $(LIBTAILOR_SONAME).$(VERSION)
