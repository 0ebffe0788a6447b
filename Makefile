# SPDX-License-Identifier: GPL-2.0-only
#
# tailor: top-level build.
#
#   make              tailor.ko (kmod/) against KDIR, the tailor command
#                     (build/userspace/tailor), the example engine
#                     (build/examples/tailor-engine), test workloads,
#                     kselftests
#   make demo         profile the example engine: natively where tailor
#                     record can sample (tailor.ko, or its BPF collector
#                     as root on a kernel with BTF), else in the test box
#                     (scripts/demo.sh; BACKEND=llvm: LLVM compiles)
#   make check        every test: native checks, then the test box on the
#                     Debian 6.1 and 6.12 kernels (needs scripts/setup.sh)
#   make box          the test box on 6.1 only (BOX=6.12 for the other)
#   make lint         W=1 + sparse builds against 6.1 and 6.12, checkpatch
#   make tools        what make install installs: the tailor command,
#                     libtailor (static and shared), the man pages (scdoc)
#                     and the bash completion; no kernel tree needed
#   make install      install those under PREFIX (default /usr/local), with
#                     DESTDIR for staging; LIBDIR, MANDIR, ... override
#   make install-dkms the module's sources and dkms.conf in
#                     $(DESTDIR)/usr/src/tailor-VERSION, then
#                     'dkms install tailor/VERSION' builds it for a kernel
#   make deb          the Debian packages in build/deb (scripts/build-debs.sh)
#   make clean
#
# KDIR defaults to the running kernel's build tree, or, where there is
# none (a VM without its kernel's modules), the installed Debian 6.1
# headers.

RUNNING_BUILD := /lib/modules/$(shell uname -r)/build
DEBIAN_6_1 := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))
ifeq ($(origin KDIR),undefined)
  ifneq ($(wildcard $(RUNNING_BUILD)/Makefile),)
    KDIR := $(RUNNING_BUILD)
  else
    KDIR := $(DEBIAN_6_1)
    KDIR_NOTE := (no build tree for the running kernel $(shell uname -r))
  endif
endif

BUILD := $(CURDIR)/build
KSFT_DIR ?= /usr/src/linux-source-6.1/tools/testing/selftests
BOX ?= 6.1
# kbuild writes kmod/tailor.mod.c beside the sources: not one of them.
MODULE_SRCS := Kbuild kmod/Kbuild $(filter-out %.mod.c,$(wildcard kmod/*.c)) \
	$(wildcard kmod/*.h kmod/include/uapi/*.h)

.PHONY: all module userspace examples workloads kselftests check lint box demo clean \
	tools man install install-dkms deb print-version print-libtailor

include userspace/version.mk
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DKMS_SRC := /usr/src/tailor-$(VERSION)

all: module userspace examples workloads kselftests

userspace:
	$(MAKE) -C userspace O=$(BUILD)/userspace

examples: userspace
	$(MAKE) -C userspace/examples/engine O=$(BUILD)/examples

workloads: userspace
	$(MAKE) -C tests/workloads O=$(BUILD)/workloads

# MODULE_OUT builds a copy of the sources elsewhere, so modules for
# several kernels can coexist (the test box uses it).
module:
	@test -n "$(KDIR)" -a -d "$(KDIR)" || { \
		echo "tailor: no kernel build tree (KDIR); run scripts/setup.sh" >&2; exit 1; }
	@echo "tailor: building tailor.ko against $(KDIR) $(KDIR_NOTE)"
ifeq ($(MODULE_OUT),)
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules
else
	rm -rf $(MODULE_OUT) && mkdir -p $(MODULE_OUT)
	cp --parents $(MODULE_SRCS) $(MODULE_OUT)/
	$(MAKE) -C $(KDIR) M=$(MODULE_OUT) W=1 modules
endif

kselftests:
	@test -f $(KSFT_DIR)/kselftest_harness.h || { \
		echo "tailor: $(KSFT_DIR)/kselftest_harness.h missing; run scripts/setup.sh" >&2; exit 1; }
	@mkdir -p $(BUILD)/kselftest
	$(MAKE) -C tests/kselftest KSFT_DIR=$(KSFT_DIR) OUTPUT=$(BUILD)/kselftest

check:
	@bash scripts/check.sh

lint:
	@bash scripts/check.sh --native-only

box:
	@bash tests/box/run.sh $(BOX)

print-version:
	@echo $(VERSION)

print-libtailor:
	@echo $(LIBTAILOR_REAL)

# The man pages: docs/man/*.scd with the OPTIONS of each command and the
# list of commands filled in from tailor's own tables (scripts/man-pages.sh).
man: userspace
	@bash scripts/man-pages.sh $(BUILD)/userspace/tailor docs/man $(BUILD)/man

# Written only when it changed, so that 'sudo make install' after 'make
# tools' writes nothing into build/.
tools: userspace man
	@$(BUILD)/userspace/tailor completion bash | cmp -s - $(BUILD)/tailor.bash || \
		$(BUILD)/userspace/tailor completion bash > $(BUILD)/tailor.bash

LIBTAILOR_HEADERS := $(wildcard userspace/libtailor/include/tailor/*.h)

install: tools
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/tailor $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(BUILD)/userspace/tailor $(DESTDIR)$(BINDIR)/tailor
	install -m 644 $(BUILD)/userspace/libtailor.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(BUILD)/userspace/$(LIBTAILOR_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIBTAILOR_REAL) $(DESTDIR)$(LIBDIR)/$(LIBTAILOR_SONAME)
	ln -sf $(LIBTAILOR_SONAME) $(DESTDIR)$(LIBDIR)/libtailor.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		userspace/libtailor/libtailor.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libtailor.pc
	install -m 644 $(LIBTAILOR_HEADERS) $(DESTDIR)$(INCLUDEDIR)/tailor/
	install -D -m 644 kmod/include/uapi/tailor.h $(DESTDIR)$(INCLUDEDIR)/tailor/uapi/tailor.h
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BUILD)/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 $(BUILD)/man/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(BUILD)/tailor.bash $(DESTDIR)$(BASHCOMPDIR)/tailor
	@# Into the live system: the loader's cache must learn the library
	@# (/usr/local/lib is searched only through it).  Staged: the package
	@# manager's business.
	@if [ -z "$(DESTDIR)" ]; then ldconfig || echo "tailor: run ldconfig as root" >&2; fi

# What DKMS builds from: the module's Kbuild files and sources, and
# dkms.conf, whose version must be this one (make check compares them).
install-dkms:
	@grep -q '^PACKAGE_VERSION="$(VERSION)"$$' dkms.conf || { \
		echo "tailor: dkms.conf's PACKAGE_VERSION is not $(VERSION)" >&2; exit 1; }
	for f in dkms.conf $(MODULE_SRCS); do \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_SRC)/$$f || exit 1; \
	done

deb:
	@bash scripts/build-debs.sh

# make demo BACKEND=llvm: the engine compiles with LLVM's ORC JIT.
demo:
	@bash scripts/demo.sh $(if $(BACKEND),--backend $(BACKEND))

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1
	rm -rf $(BUILD)
