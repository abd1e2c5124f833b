# dmlimits: `make help` lists the targets. Everything runs inside .venv (created on demand).
VENV    ?= .venv
PYTHON  ?= python3
BIN     := $(VENV)/bin
PIN     := -c requirements/constraints.txt

.PHONY: help run test test-fast lint typecheck unit wheel-check commits constraints bench docs validation performance golden clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.base: pyproject.toml requirements/constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIN) -e .
	touch $@

$(VENV)/.dev: pyproject.toml requirements/constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIN) -e '.[dev]'
	touch $@ $(VENV)/.base

run: $(VENV)/.base ## install and run the default scenario (H100, dense, critical batch, 3 months)
	$(BIN)/dmlimits

test: lint typecheck unit ## install, then lint, type-check and run the whole test suite

lint: $(VENV)/.dev ## ruff lint and format check, unused names (vulture), import contracts (docs/architecture.md)
	$(BIN)/ruff check pipeline hydra_plugins tests bench vulture_whitelist.py
	$(BIN)/ruff format --check pipeline hydra_plugins tests bench vulture_whitelist.py
	$(BIN)/vulture pipeline hydra_plugins vulture_whitelist.py
	$(BIN)/lint-imports --no-logo

typecheck: $(VENV)/.dev ## mypy --strict over the package
	$(BIN)/mypy

unit: $(VENV)/.dev ## pytest, every test (slow ones included)
	$(BIN)/pytest

test-fast: $(VENV)/.dev ## the quick inner loop: pytest without the tests marked slow
	$(BIN)/pytest -m "not slow"

golden: $(VENV)/.dev ## regenerate the 21 paper series' golden file (only for a deliberate model change)
	$(BIN)/python -m tests.validation.paper_series

wheel-check: ## build the wheel, install it in a fresh venv outside the checkout, run a small grid
	.ci/wheel-check

commits: ## the subjects of the commits not on main: at most 72 characters, none WIP
	.ci/commit-messages main

constraints: $(VENV)/.dev ## re-pin requirements/constraints.txt from the dev environment
	{ sed -n '1,3p' requirements/constraints.txt; $(BIN)/pip freeze --exclude-editable | grep -v '^dmlimits'; } > requirements/constraints.tmp
	mv requirements/constraints.tmp requirements/constraints.txt

bench: $(VENV)/.dev ## model and sweep benchmarks (report figures, never fail)
	$(BIN)/python bench/bench_model.py
	$(BIN)/python bench/bench_sweep.py

docs: $(VENV)/.base ## rewrite docs/results.md and README's headline from the model (after a model, preset or forecast change)
	$(BIN)/python bench/results.py

validation: $(VENV)/.dev ## rewrite docs/validation.md's leave-one-source-out calibration tables (after a realistic-physics change)
	$(BIN)/python -m tests.validation.calibration

performance: $(VENV)/.base ## measure and rewrite docs/performance.md (a few minutes; on a quiet machine)
	$(BIN)/python bench/performance.py

clean: ## remove the virtualenv and git-ignored outputs
	rm -rf $(VENV) outputs multirun .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
