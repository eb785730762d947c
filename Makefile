# `make run` and `make test` work on a fresh machine: they build .venv first.
# On the distribution's Python when it is 3.11 or later and makes virtualenvs (Debian's
# is built with profile-guided and link-time optimisation: a tenth to a quarter less CPU
# a move than an interpreter built without, README: Performance), else python3 on PATH.
USABLE := import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))
PYTHON ?= $(shell /usr/bin/python3 -c '$(USABLE)' 2>/dev/null && echo /usr/bin/python3 || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 5000
SMTP_PORT ?= 2525
WORKERS ?= 1

# The German (and any further) catalogue, compiled from its source at setup (the
# .mo files are built, not kept in git).
CATALOGUES := $(wildcard pbm/translations/*/LC_MESSAGES/messages.po)
COMPILED := $(CATALOGUES:.po=.mo)

# What marks a sentence besides gettext/_/N_: a PlayerError's lazy_gettext, and
# the games' errors and texts (their first argument is the English sentence).
KEYWORDS := -k lazy_gettext -k MoveError -k InvalidMoveError -k IllegalMoveError -k OptionError -k GameText

.PHONY: setup run test bench fuzz clean messages

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

%.mo: %.po $(STAMP)
	$(BIN)/pybabel compile --statistics -i $< -o $@

setup: $(STAMP) $(COMPILED)

# After adding or changing a sentence: collect every marked string and merge
# the new ones into each catalogue (then translate the empty msgstr entries).
messages: setup
	$(BIN)/pybabel extract -F babel.cfg $(KEYWORDS) --no-location -o pbm/translations/messages.pot .
	$(BIN)/pybabel update -i pbm/translations/messages.pot -d pbm/translations --no-fuzzy-matching --ignore-obsolete

run: setup
	$(BIN)/pbm db upgrade
	$(BIN)/pbm serve --host $(HOST) --port $(PORT) --smtp-port $(SMTP_PORT) --workers $(WORKERS) --first-steps deploy/first-game.txt

test: setup
	$(BIN)/python -m pytest

# One scratch directory for the whole run, removed at its end (benchmarks/run.py,
# scratch_dir: files deleted between the parts would slow the next part's Maildir).
bench: setup
	export PBM_BENCH_SCRATCH=$$(mktemp -d -t pbm-bench-XXXXXX) && trap 'rm -rf "$$PBM_BENCH_SCRATCH"' EXIT && \
	$(BIN)/python benchmarks/run.py && \
	$(BIN)/python benchmarks/workers.py && \
	$(BIN)/python benchmarks/players.py --games 10

# The long run of hostile mail: 10,000 generated mails through ingest, the webhook
# and SMTP; prints the figures the README reports (FUZZ_ARGS="--database-url ..." for PostgreSQL).
fuzz: setup
	$(BIN)/python -m tests.fuzz.longrun $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) instance .pytest_cache $(COMPILED) pbm/translations/messages.pot
