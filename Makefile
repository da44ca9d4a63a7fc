# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

.PHONY: demo test release clean-venv

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.run-installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev,dask]'
	touch $@ $(VENV)/.run-installed

demo: $(VENV)/.run-installed
	$(PY) -m autograder demo

test: $(VENV)/.dev-installed
	$(PY) -m pytest --nbval-lax --nbval-current-env tests source/ch04_attention

release: $(VENV)/.run-installed
	$(PY) -m autograder release

clean-venv:
	rm -rf $(VENV)
