# The course's commands. `make lab` to learn, `make test` to check. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export PIP_DISABLE_PIP_VERSION_CHECK := 1
NB ?=

.PHONY: help install model lab run test lock grade test-unit test-integration test-notebooks lint \
        test-browser record notebooks stop-model clear-cache bench-llm bench-sandbox clean

help:
	@echo "make lab        install everything, prepare the local model, start JupyterLab (python3 course.py lab)"
	@echo "make run        execute every notebook live on the configured model (headless), into build/run/"
	@echo "make model      fetch and verify the local model (COURSE_LOCAL_MODEL=qwen2.5-coder-0.5b for the second size)"
	@echo "make test       install if needed and run the suite: ruff, unit tests, nbval in replay (what a learner runs)"
	@echo "make test-integration  the tests on the real local model (CI runs it after make test)"
	@echo "make grade DIR=submissions  (instructors) grade one folder per learner offline: build/grades/grades.csv, feedback/"
	@echo "make lock       (maintainers) regenerate requirements/lock.txt from pyproject.toml (UPGRADE=1)"
	@echo "make test-browser  (maintainers) open every notebook in JupyterLab in headless Chromium: opens clean, saves unchanged"
	@echo "make record     re-record cassettes live (NB=01 for one lesson), then refresh notebook outputs"
	@echo "make notebooks  derive notebooks/ from solutions/ and refresh outputs in replay (no model needed)"
	@echo "make stop-model stop the shared local model server"
	@echo "make clear-cache forget the live request cache (replies the local model already gave)"
	@echo "make bench-llm  the local engine: speed vs the engine's own, slots, speculation, prompt cache, replay"

# The README's commands are course.py's (it runs without make too: `python3 course.py lab`).
install:
	@$(PYTHON) course.py setup --no-model

model:
	@$(PYTHON) course.py setup

lab:
	@$(PYTHON) course.py lab

run:
	@$(PYTHON) course.py run $(if $(NB),--only $(NB),)

test:
	@$(PYTHON) course.py test

test-integration:
	@$(PYTHON) course.py test-integration

# Maintainers: requirements/lock.txt from pyproject.toml's ranges (UPGRADE=1 moves every pin).
grade:
	@test -n "$(DIR)" || { echo "make grade DIR=<folder with one folder per learner>"; exit 2; }
	@$(PYTHON) course.py grade "$(DIR)" $(if $(OUT),--out "$(OUT)",)

lock:
	@$(PYTHON) course.py lock $(if $(UPGRADE),--upgrade,)

# pytest-xdist, each test module (and each notebook, whose cells run in order) on one worker: 3 workers on
# 2 cores, since many tests wait (a sandbox timeout, a server to stop, a kernel to start).
XDIST := -n 3 --dist loadscope

# Every committed notebook opened in a real JupyterLab (Debian's chromium and chromium-driver, driven
# by Selenium): no dialog, no stderr, pictures decoded, widgets' text views, unchanged after a save.
test-browser: install
	$(PY) tools/browser_check.py

test-unit: install
	$(PY) -m pytest -q $(XDIST) tests -m "not integration"

test-notebooks: install
	$(PY) -m pytest -q -p no:cacheprovider $(XDIST) --nbval --nbval-kernel-startup-timeout=180 --nbval-sanitize-with tests/nbval_sanitize.cfg solutions

lint: install
	$(BIN)/ruff check shared tests tools benchmarks notebooks solutions course.py conftest.py
	$(BIN)/ruff format --check shared tests tools

notebooks: install
	$(PY) tools/build_exercises.py
	$(PY) tools/run_notebooks.py --refresh $(if $(NB),--only $(NB),)

record: model
	$(if $(KEEP),COURSE_RECORD_KEEP=1 ,)$(PY) tools/run_notebooks.py --record $(if $(NB),--only $(NB),)

stop-model: install
	$(PY) -m course_runtime.manager stop

clear-cache: install
	$(PY) -m course_runtime.response_cache clear

bench-llm: model
	$(PY) benchmarks/bench_llm.py

bench-sandbox: install
	$(PY) benchmarks/bench_sandbox.py

clean:
	rm -rf build .pytest_cache
