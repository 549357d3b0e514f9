# krping_npu: out-of-tree modules, userspace unit tests and the VM rig.
#
#   make            build the modules against KDIR
#   make unit       userspace unit tests of proc/ (seconds)
#   make check      make test's checks that boot no VM: unit, W=1, sparse,
#                   the files' dependency order, docs (two minutes)
#   make docs       the option tables of README.md and docs/grammar.md
#   make test       everything: unit tests, build checks, the VM suites on
#                   Debian 12's kernel and on every kernel of the matrix
#                   (a share of the suites; 50 to 60 minutes)
#   make demo       boot a VM with rxe, run a server and a client, print results
#   make bench      krping_npu beside perftest in one VM boot -> results/
#   make test-debug the VM suites on a KASAN/kmemleak/lockdep/DMA-API debug
#                   build of Debian's 6.1 source (long; not in make test)
#   make test-mesh  scripts/mesh over four VMs on one qemu hub network
#                   (a slowed VM named, a powered-off one reported; about 95 s;
#                   also in make test)
#   make test-matrix all five VM suites on every kernel of the matrix
#                   (scripts/rig/matrix: 5.10, 6.1, 6.12, their PREEMPT_RT
#                   flavours, arm64 4 KiB and 16 KiB pages; long)
#   make test-arm64 the suites on the arm64 kernels only

KVER ?= $(shell scripts/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
W ?= 1

# An RDMA stack that replaces the kernel's ib_core (MLNX_OFED/DOCA-OFED,
# Yunsilicon xsc): build against its headers (before the kernel's), its
# compat header when it has one, and its Module.symvers, or the modules
# will not load beside it.  OFED_DIR= and XSC_DIR= name the trees; without
# OFED_DIR, /usr/src/ofa_kernel/<arch>/<kver> or .../default is taken when
# present (scripts/rdma-stack).  OFED_DIR= (empty) forces the kernel's own.
ifeq ($(origin OFED_DIR),undefined)
OFED_DIR := $(if $(KVER),$(shell scripts/rdma-stack $(KVER)))
OFED_HOW := auto-detected
else
OFED_HOW := OFED_DIR=
endif
XSC_DIR ?=
KP_STACK_DIRS := $(strip $(OFED_DIR) $(XSC_DIR))
KP_STACK_DESC := $(if $(KP_STACK_DIRS),$(if $(OFED_DIR),ofed:$(OFED_DIR))$(if $(and $(OFED_DIR),$(XSC_DIR)),+)$(if $(XSC_DIR),xsc:$(XSC_DIR)),kernel)
KP_STACK_ARGS := KP_STACK_DIRS="$(KP_STACK_DIRS)" KP_STACK_DESC="$(KP_STACK_DESC)" \
	$(if $(KP_STACK_DIRS),KBUILD_EXTRA_SYMBOLS="$(foreach d,$(KP_STACK_DIRS),$(d)/Module.symvers)")

# The compiler: whichever builds a module against KDIR (scripts/kcc tries
# the one the headers name, then gcc), never chosen by version.
KP_ARCH_ARGS := $(if $(ARCH),ARCH=$(ARCH)) $(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE))
KP_CC = $$(sed -n 's/^args: //p' $(CURDIR)/build/kcc)

UNIT_SRCS := proc/kp_opts.c proc/kp_report.c proc/kp_payload.c peer_client/npu_reg.c
UNIT_TESTS := tests/unit/test_opts tests/unit/test_report tests/unit/test_layout \
	      tests/unit/test_reg tests/unit/test_time tests/unit/test_hal
UNIT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O1 -g \
	       -fsanitize=address,undefined -fno-omit-frame-pointer

.PHONY: all modules stack-check test-modules clean unit docs test test-debug test-arm64 test-matrix test-mesh demo bench setup check

all: modules

modules: stack-check
	@test -d "$(KDIR)" || { echo "no kernel headers at '$(KDIR)': run scripts/setup"; exit 1; }
	@mkdir -p build
	@scripts/kcc $(KDIR) build/kcc $(KP_ARCH_ARGS)
	@KP_STACK_DIRS="$(KP_STACK_DIRS)" scripts/conftest $(KDIR) $(CURDIR)/build/kp_conftest.h $(KP_ARCH_ARGS) $(KP_CC)
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) $(KP_CC) $(KP_STACK_ARGS) KP_CONFTEST_H=$(CURDIR)/build/kp_conftest.h modules

# One line saying which RDMA stack the modules are built against; a named
# tree that is not one fails here, before kbuild.
stack-check:
	@for d in $(KP_STACK_DIRS); do \
		if [ ! -f "$$d/include/rdma/ib_verbs.h" ] || [ ! -f "$$d/Module.symvers" ]; then \
			echo "rdma stack: '$$d' is not an RDMA stack's kernel tree: it needs include/rdma/ib_verbs.h and Module.symvers" >&2; \
			exit 1; \
		fi; \
	done
	@echo "rdma stack: $(if $(OFED_DIR),OFED at $(OFED_DIR) ($(OFED_HOW))$(if $(XSC_DIR),; ),$(if $(XSC_DIR),,the kernel's own ib_core))$(if $(XSC_DIR),xsc at $(XSC_DIR) (XSC_DIR=))"

# test-only modules: the stand-in peer-memory cores, fault injection, a
# HAL user that breaks the rules on purpose
test-modules: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/core W=$(W) $(KP_CC) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/fault W=$(W) $(KP_CC) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/hal W=$(W) $(KP_CC) \
		KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules

# Not kbuild's clean: with M= it deletes every object file below M,
# the debug lane's kernel tree in build/ included.
clean:
	find krping_npu peer_client proc tests/core tests/fault tests/hal -type f \( -name '*.o' \
		-o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name '.*.d' -o -name modules.order \
		-o -name Module.symvers \) -delete
	rm -f Module.symvers modules.order .*.cmd .*.d
	rm -f $(addsuffix .bin,$(UNIT_TESTS))

tests/unit/%.bin: tests/unit/%.c $(UNIT_SRCS) proc/*.h peer_client/peer_mem_abi.h peer_client/ascend_hal_abi.h peer_client/npu_reg.h krping_npu/kp_time.h tests/unit/kt.h
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_SRCS) -lm

unit: $(addsuffix .bin,$(UNIT_TESTS))
	@tests/drivers/run-unit $^

# the option tables of README.md and docs/grammar.md, from proc/kp_opts.c
docs:
	scripts/docs

setup:
	scripts/setup

test:
	scripts/setup matrix
	tests/drivers/test

# the part of make test that boots no VM: unit, W=1, sparse, deps, docs
check:
	KP_TEST_HOST_ONLY=1 tests/drivers/test

test-debug:
	tests/drivers/test-debug

test-matrix:
	scripts/setup matrix
	tests/drivers/test-matrix

test-arm64:
	scripts/setup matrix
	tests/drivers/test-matrix arm64-6.1 arm64-16k-6.12

test-mesh:
	scripts/setup
	tests/drivers/test-mesh

demo:
	scripts/setup
	scripts/demo

bench:
	scripts/setup
	scripts/bench
