# krping_npu: out-of-tree modules, userspace unit tests and the VM rig.
#
#   make            build the modules against KDIR
#   make unit       userspace unit tests of proc/ (seconds)
#   make test       everything: unit tests, build checks, VM integration
#   make demo       boot a VM with rxe, run a server and a client, print results
#   make bench      krping_npu beside perftest in one VM boot -> results/
#   make test-debug the VM suites on a KASAN/kmemleak/lockdep/DMA-API debug
#                   build of Debian's 6.1 source (long; not in make test)

KVER ?= $(shell scripts/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
W ?= 1

UNIT_SRCS := proc/kp_opts.c proc/kp_report.c proc/kp_payload.c
UNIT_TESTS := tests/unit/test_opts tests/unit/test_report tests/unit/test_layout
UNIT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O1 -g \
	       -fsanitize=address,undefined -fno-omit-frame-pointer

.PHONY: all modules test-modules clean unit test test-debug demo bench setup check

all: modules

modules:
	@test -d "$(KDIR)" || { echo "no kernel headers at '$(KDIR)': run scripts/setup"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

# test-only modules: the stand-in peer-memory cores, fault injection, a
# HAL user that breaks the rules on purpose
test-modules: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/core W=$(W) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/fault W=$(W) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/hal W=$(W) \
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

tests/unit/%.bin: tests/unit/%.c $(UNIT_SRCS) proc/*.h peer_client/peer_mem_abi.h peer_client/ascend_hal_abi.h tests/unit/kt.h
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_SRCS) -lm

unit: $(addsuffix .bin,$(UNIT_TESTS))
	@scripts/run-unit $^

setup:
	scripts/setup

test:
	scripts/setup
	scripts/test

test-debug:
	scripts/test-debug

demo:
	scripts/setup
	scripts/demo

bench:
	scripts/setup
	scripts/bench
