# All set-up is idempotent: `make test` and `make book` work on a fresh clone and are cheap to re-run.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PROFILE ?= cpu
APT_PKGS := dataset-fashion-mnist wordnet-base wordnet-sense-index
# tcmalloc: the book's processes run under it where installed (invlib.utils.allocator_env); without it they run as
# before, only slower, so a failed install does not stop `make`
FAST_PKGS := libtcmalloc-minimal4
BROWSER_PKGS := chromium
ONLY ?=
PARAMS ?=
export HF_HUB_OFFLINE ?= 1
# When make started: `make book` hands it to the runner, whose record of a whole build then holds the set-up too (the
# main job's 40 minutes include it; invlib.book.setup_seconds)
MAKE_START := $(shell date +%s.%N)
# pytest keeps the test modules it has rewritten (and Python the modules it compiles) in __pycache__ unless
# PYTHONDONTWRITEBYTECODE is set, as it is on some machines: collecting the tests then takes 10 s instead of 4
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

.PHONY: setup data browser test test-fast lint book zoo bench clean

# The packages are installed by uv (from PyPI, into the venv) where it can be had: the same versions as pip resolves,
# in about 25 s instead of 64 on 2 cores (benchmarks/measurements/foundation.md); pip does it where uv cannot be
# installed or fails. Neither compiles: compileall compiles every installed module on every core (set-up about 15 s
# shorter on 2 cores than pip's one core). A module that does not compile (a package's Python 2 test file) is skipped,
# as pip skips it. Python must find them compiled: where PYTHONDONTWRITEBYTECODE is set it never writes its own.
UV := $(BIN)/uv pip install -q --python $(BIN)/python
setup: $(STAMP)
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	($(BIN)/pip install -q uv && $(UV) torch==2.14.1 torchvision==0.29.1 && $(UV) -e '.[book,test]') || \
	  ($(BIN)/pip install -q --no-compile torch==2.14.1 torchvision==0.29.1 && \
	   $(BIN)/pip install -q --no-compile -e '.[book,test]')
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $@

# Install Debian packages $(1) when missing: as root with apt-get, otherwise print what to install.
define apt_ensure
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "note: Debian packages missing:$$missing (apt-get install them; see README)"; fi; \
	fi
endef

# Real offline data from Debian packages, then the library's own check/preparation (NLTK data dir built
# from the Debian WordNet files). Without root it prints what is missing (or set INVLIB_DATA; see README).
data: setup
	$(call apt_ensure,$(APT_PKGS))
	-$(call apt_ensure,$(FAST_PKGS))
	$(BIN)/python -m invlib data check

# Debian's chromium for the browser test of the built site (playwright drives /usr/bin/chromium; it never
# downloads a browser of its own).
browser: setup
	$(call apt_ensure,$(BROWSER_PKGS))

lint: setup
	$(BIN)/ruff check .

# As root (CI) the browser test must run; elsewhere it is skipped when chromium is missing.
test: data browser lint
	INVLIB_REQUIRE_BROWSER=$$([ "$$(id -u)" = 0 ] && echo 1 || echo 0) $(PYTEST)

# Unit tests and docstring examples only: no smoke build of the book, no browser, no zoo training.
test-fast: setup
	$(PYTEST) -m "not slow"

zoo: data
	$(BIN)/python -m invlib zoo train --profile $(PROFILE)

# Execute every chapter with papermill on $(PROFILE), then jupyter-book build -W (see invlib/book.py).
# make book PROFILE=smoke ONLY="00_data_and_transforms" PARAMS="seed=3 n_show=8"
book: data
	INVLIB_MAKE_START=$(MAKE_START) $(BIN)/python -m invlib book --profile $(PROFILE) $(if $(ONLY),--only $(ONLY)) $(foreach p,$(PARAMS),-p $(p))

bench: setup
	$(BIN)/python benchmarks/bench_transforms.py
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_streaming.py
	$(BIN)/python benchmarks/bench_probes.py
	$(BIN)/python benchmarks/bench_equivariance.py
	$(BIN)/python benchmarks/bench_book.py

clean:
	rm -rf _build book/_generated results .pytest_cache .ruff_cache
