# Palimpsest: `make run` starts the whole system on the embedded default; `make test` runs every test.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
STAMP  := $(VENV)/.installed

.PHONY: install run test test-unit test-integration test-e2e test-fast bench bench-scale migrate clean-var

install: $(STAMP)

# torch goes first and exactly pinned: the CPU wheel is on this machine's disk, any looser spec
# would pull several GB of CUDA wheels. A second run is quick (the stamp tracks pyproject.toml).
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "torch==2.13.0"
	@# setuptools' editable build tells, as a warning, that folders named like a package may shadow it: quiet
	PYTHONWARNINGS="ignore::UserWarning" $(PIP) install -q -e ".[test]"
	@touch $(STAMP)

run: install
	$(VENV)/bin/palimpsest run

migrate: install
	$(VENV)/bin/palimpsest migrate

# The tests come in three rings (tests/README.md). `make test` runs all three in one session, the
# fast ring first; only the integration and e2e rings start PostgreSQL and Redis.
test: install
	$(PY) -m pytest -ra --durations=25 tests/unit tests/integration tests/e2e

test-unit: install
	$(PY) -m pytest -ra tests/unit

test-integration: install
	$(PY) -m pytest -ra tests/integration

test-e2e: install
	$(PY) -m pytest -ra tests/e2e

# every ring but the tests that start processes or run long
test-fast: install
	$(PY) -m pytest -ra -m "not slow" tests/unit tests/integration tests/e2e

bench: install
	$(VENV)/bin/palimpsest bench locomo --conversations 2 --limit 25 --out-dir bench/results/tmp

# the 10k point of the scale benchmark (docs/scaling.md); the default 10k,100k,1M takes hours on 2 cores
bench-scale: install
	$(VENV)/bin/palimpsest bench scale --sizes 10000

clean-var:
	rm -rf var
