# bootlab: `make demo` boots the reference device and shows where its boot time goes;
# `make test` runs every test.  Both set up what they need first (make setup).

VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test test-python test-c lint bench clean

setup:
	scripts/setup

demo: setup
	$(BIN)/bootlab demo

test: setup
	$(MAKE) test-python test-c

test-python:
	$(BIN)/pytest

test-c:
	@for d in rt apps/grabber; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d check || exit 1; fi; \
	done

bench: setup
	$(BIN)/python bench/analyze_scale.py

clean:
	rm -rf out build .pytest_cache
	@for d in rt apps/grabber; do [ -f $$d/Makefile ] && $(MAKE) -C $$d clean; done; true
