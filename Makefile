# `make demo` and `make test` each set themselves up on a fresh machine
# (Python 3.11+ and Java 17): they create .venv and install headwater into it.
# `make test` also creates .venv-spark3.5, where the agent's Spark tests and
# the conformance suite run again on the Spark 3.5 line. `make test-line
# LINE=4.0` does the same on any line with a constraints/spark-<line>.txt.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The main environment's line: the newest with builds of every connector.
MAIN_LINE := 4.1
MAIN_CONSTRAINTS := constraints/spark-$(MAIN_LINE).txt
VENV_35  := .venv-spark3.5
BIN_35   := $(VENV_35)/bin
STAMP_35 := $(VENV_35)/.installed
LINE     ?= 4.0
BIN_LINE := .venv-spark$(LINE)/bin

export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: demo test test-line bench clean
.PRECIOUS: .venv-spark%/.installed

# $(call venv,DIR,CONSTRAINTS): DIR holds headwater and its development extras.
define venv
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	$(1)/bin/python -m pip install --quiet -e '.[dev]' -c $(2)
	touch $(1)/.installed
endef

$(STAMP): pyproject.toml $(MAIN_CONSTRAINTS)
	$(call venv,$(VENV),$(MAIN_CONSTRAINTS))

.venv-spark%/.installed: pyproject.toml constraints/spark-%.txt
	$(call venv,.venv-spark$*,constraints/spark-$*.txt)

demo: $(STAMP)
	$(BIN)/headwater demo

# Both lines run even when the first fails, so one run reports every failure.
test: $(STAMP) $(STAMP_35)
	status=0; \
	$(BIN)/python -m pytest $(PYTEST_ARGS) || status=$$?; \
	$(BIN_35)/python -m pytest tests/agent tests/conformance $(PYTEST_ARGS) || status=$$?; \
	exit $$status

test-line: .venv-spark$(LINE)/.installed
	$(BIN_LINE)/python -m pytest tests/agent tests/conformance $(PYTEST_ARGS)

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .venv-spark* .pytest_cache build dist
