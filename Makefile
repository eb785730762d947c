# `make run` and `make test` work on a fresh machine: they build .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 5000
SMTP_PORT ?= 2525

.PHONY: setup run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/pbm db upgrade
	$(BIN)/pbm serve --host $(HOST) --port $(PORT) --smtp-port $(SMTP_PORT) --first-steps deploy/first-game.txt

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/workers.py
	$(BIN)/python benchmarks/players.py --games 10

clean:
	rm -rf $(VENV) instance .pytest_cache
