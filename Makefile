# All set-up is idempotent: `make test` and `make book` work on a fresh clone and are cheap to re-run.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PROFILE ?= cpu
APT_PKGS := dataset-fashion-mnist wordnet-base wordnet-sense-index
export HF_HUB_OFFLINE ?= 1

.PHONY: setup data test test-fast lint book zoo bench clean

setup: $(STAMP)
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.14.1 torchvision==0.29.1
	$(BIN)/pip install -q -e '.[book,test]'
	touch $@

# Real offline data from Debian packages (needs root; otherwise prints what is missing), then the
# library's own check/preparation (NLTK data dir built from the Debian WordNet files).
data: setup
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "note: Debian packages missing:$$missing (apt-get install them, or set INVLIB_DATA; see README)"; fi; \
	fi
	$(BIN)/python -m invlib data check

lint: setup
	$(BIN)/ruff check .

test: data lint
	$(BIN)/python -m pytest

test-fast: setup
	$(BIN)/python -m pytest -m "not slow"

zoo: data
	$(BIN)/python -m invlib zoo train --profile $(PROFILE)

# The papermill runner (python -m invlib book --profile $(PROFILE)) takes over here once chapters exist.
book: data
	$(BIN)/jupyter-book build . -W -n --keep-going
	test -f _build/html/index.html

bench: setup
	$(BIN)/python benchmarks/bench_transforms.py
	$(BIN)/python benchmarks/bench_train.py

clean:
	rm -rf _build book/_generated results .pytest_cache .ruff_cache
