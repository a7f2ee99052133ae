# `make demo` and `make test` each set themselves up on a fresh machine
# (Python 3.11+ and Java 17): they create .venv and install headwater into it.
# `make test` also creates .venv-spark3.5, where the agent's Spark tests and
# the conformance suite run again on the Spark 3.5 line.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
VENV_35  ?= .venv-spark3.5
BIN_35   := $(VENV_35)/bin
STAMP_35 := $(VENV_35)/.installed

export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: demo test bench clean

$(STAMP): pyproject.toml constraints/spark-4.0.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' -c constraints/spark-4.0.txt
	touch $(STAMP)

$(STAMP_35): pyproject.toml constraints/spark-3.5.txt
	$(PYTHON) -m venv $(VENV_35)
	$(BIN_35)/python -m pip install --quiet --upgrade pip
	$(BIN_35)/python -m pip install --quiet -e '.[dev]' -c constraints/spark-3.5.txt
	touch $(STAMP_35)

demo: $(STAMP)
	$(BIN)/headwater demo

# Both lines run even when the first fails, so one run reports every failure.
test: $(STAMP) $(STAMP_35)
	status=0; \
	$(BIN)/python -m pytest $(PYTEST_ARGS) || status=$$?; \
	$(BIN_35)/python -m pytest tests/agent tests/conformance $(PYTEST_ARGS) || status=$$?; \
	exit $$status

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(VENV_35) .pytest_cache build dist
