# bootlab: `make demo` boots the reference device and shows where its boot time goes;
# `make test` runs every test.  Both set up what they need first (make setup).

VENV := .venv
BIN := $(VENV)/bin
# The headers matching the reference device's kernels (setup installs them): generic and -rt.
KDIR = /usr/src/$(shell $(BIN)/bootlab target fetch --print-headers-package)
KDIR_RT = /usr/src/$(shell $(BIN)/bootlab target fetch --print-headers-package --kernel rt)
# The ARM64 board's: Debian's arm64 headers, unpacked into the cache.
KDIR_ARM64 = $(shell $(BIN)/bootlab target fetch --arch arm64 --print-headers-dir)

.PHONY: setup build demo test test-python test-c bench clean

setup:
	scripts/setup

# What runs in the guest: the scheduler's modules and programs, the grabber, benchmarks;
# and the C part of the Python package (the dmesg scanner).
build: setup
	$(MAKE) -C src/bootlab/_native PYTHON=$(CURDIR)/$(BIN)/python
	$(MAKE) -C rt all KDIR=$(KDIR) KDIR_RT=$(KDIR_RT)
	$(MAKE) -C apps/grabber static
	$(MAKE) -C apps/grabber static CC=aarch64-linux-gnu-gcc BUILD=build/arm64
	$(MAKE) -C rt arm64 KDIR_ARM64=$(KDIR_ARM64)
	$(MAKE) -C bench/iomux static

demo: build
	$(BIN)/bootlab demo --target demo/camera.toml

test: build
	$(MAKE) test-c
	$(MAKE) test-python

# Two phases.  What the host's load cannot change (tests that boot nothing, and the booting
# ones marked `parallel`: -icount guests, orders and contents) runs in parallel, a worker per
# core up to four: a guest keeps one host core busy.  Then the booting tests that compare
# durations (A/B statistics, console cost, ready times) run one after the other on a host
# that is otherwise idle, as they always did.  TEST_JOBS=1 makes the first phase serial too.
TEST_JOBS ?= $(shell n=$$(nproc); echo $$(( n < 4 ? n : 4 )))
TESTS := tests apps/grabber/tests rt/tests
test-python:
	$(BIN)/pytest -n $(TEST_JOBS) --dist worksteal -m "not qemu or parallel" $(TESTS)
	$(BIN)/pytest -m "qemu and not parallel" $(TESTS)

test-c:
	$(MAKE) -C rt check checkpatch KDIR=$(KDIR)
	$(MAKE) -C apps/grabber check
	$(MAKE) -C bench/iomux check
	$(MAKE) -C src/bootlab/_native check PYTHON=$(CURDIR)/$(BIN)/python

bench: build
	mkdir -p out
	$(BIN)/python bench/analyze_scale.py
	$(BIN)/python bench/capture_accuracy.py
	$(MAKE) -C bench/iomux run
	bench/guest.sh bench/iomux/guest.toml out/iomux-guest.log
	bench/guest.sh bench/rt_latency/guest.toml out/rt-latency-guest.log
	$(BIN)/python bench/rt_latency/analyze.py out/rt-latency-guest.log
	$(MAKE) -C bench/rt_boot run
	$(MAKE) -C bench/rt_boot run-arm64
	$(MAKE) -C bench/rt_smp run

clean:
	rm -rf out .pytest_cache
	$(MAKE) -C rt clean
	$(MAKE) -C apps/grabber clean
	$(MAKE) -C bench/iomux clean
	$(MAKE) -C src/bootlab/_native clean PYTHON=$(CURDIR)/$(BIN)/python
