# SPDX-License-Identifier: GPL-2.0-only
#
# tailor: top-level build.
#
#   make              tailor.ko (kmod/) against KDIR, the tailor command
#                     (build/userspace/tailor), the example engine
#                     (build/examples/tailor-engine), test workloads,
#                     kselftests
#   make demo         profile the example engine: in the test box, or
#                     natively where tailor.ko is loaded (scripts/demo.sh;
#                     BACKEND=llvm: the engine compiles with LLVM)
#   make check        every test: native checks, then the test box on the
#                     Debian 6.1 and 6.12 kernels (needs scripts/setup.sh)
#   make box          the test box on 6.1 only (BOX=6.12 for the other)
#   make lint         W=1 + sparse builds against 6.1 and 6.12, checkpatch
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
MODULE_SRCS := Kbuild kmod/Kbuild $(wildcard kmod/*.c kmod/*.h kmod/uapi/*.h)

.PHONY: all module userspace examples workloads kselftests check lint box demo clean

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

# make demo BACKEND=llvm: the engine compiles with LLVM's ORC JIT.
demo:
	@bash scripts/demo.sh $(if $(BACKEND),--backend $(BACKEND))

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1
	rm -rf $(BUILD)
