# dpsynth: one job per target.  Works on a fresh machine with only Python 3.11:
# the first target that needs it creates .venv and installs the package.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export COLUMNS := 100

.PHONY: install spark demo demo-discover test test-slow lint layers docs mutants bench bench-quick bench-papers clean

# Bytecode is written lazily, by the first process that imports a module: `pip install --no-compile` skips
# compiling ~6,500 library files of which the tests import a fraction (about half the install time), and a
# PYTHONDONTWRITEBYTECODE inherited from the caller would make every test process (pytest's workers, each
# `python -m dpsynth` subprocess) compile pandas, scipy and dpsynth again from source.
unexport PYTHONDONTWRITEBYTECODE
# The spark extra comes with the first install wherever Java exists: one resolver pass and one editable
# build, not a second `pip install` for `make spark`.
HAVE_JAVA := $(shell { command -v java || { [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/java" ]; }; } >/dev/null 2>&1 \
                && echo yes)
comma     := ,
EXTRAS    := $(if $(HAVE_JAVA),dev$(comma)spark,dev)
PIP_INSTALL := $(BIN)/python -m pip install --quiet --no-compile --disable-pip-version-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@mkdir -p demo_out
	$(BIN)/dpsynth release -c configs/adult-mwem.yaml -i sample_data/adult.csv -o demo_out/adult_synth.csv \
	    -r demo_out/adult_synth.report.json --marginals demo_out/adult_noisy_marginals.csv --force
	@echo "--- report summary (demo_out/adult_synth.report.json)"
	@$(BIN)/python -c "import json; r=json.load(open('demo_out/adult_synth.report.json')); p=r['privacy']; \
	print('algorithm', r['algorithm']['name'], '| epsilon spent', format(p['epsilon_spent'], '.4g'), 'of', p['epsilon_requested'], \
	'|', p['composition']['theorem'], 'composition |', len(r['ledger']), 'ledger entries |', r['output']['rows'], 'rows')"
	$(BIN)/dpsynth evaluate -c configs/adult.yaml --real sample_data/adult.csv --synthetic demo_out/adult_synth.csv \
	    --marginals demo_out/adult_noisy_marginals.csv --k 1,2,3 --json demo_out/adult_eval.json --plot demo_out/adult_eval.png --force
	@echo "--- zero-config: no schema, no config: discovery and release in one budget (epsilon 1)"
	$(BIN)/dpsynth release -i sample_data/adult.csv -o demo_out/adult_zero.csv --epsilon 1 --force -q
	$(BIN)/dpsynth evaluate -c demo_out/adult_zero.csv.config.yaml --real sample_data/adult.csv \
	    --synthetic demo_out/adult_zero.csv --k 2 --force | head -8

demo-discover: $(STAMP)
	@mkdir -p demo_out
	@echo "--- 1. private schema discovery (epsilon 0.2, delta 1e-6) on sample_data/adult.csv"
	$(BIN)/dpsynth schema discover -i sample_data/adult.csv --epsilon 0.2 --delta 1e-6 --max-categories 20 \
	    --hints configs/hints/adult.yaml -o demo_out/adult_discovered.yaml --force
	@head -12 demo_out/adult_discovered.yaml
	@echo "--- 2. one run: discovery (epsilon 0.2) + MWEM release (the rest of epsilon 1) in one ledger"
	$(BIN)/dpsynth release -c configs/adult-discover.yaml -i sample_data/adult.csv -o demo_out/adult_discover_synth.csv \
	    -r demo_out/adult_discover_synth.report.json --force
	@$(BIN)/python -c "import json; r=json.load(open('demo_out/adult_discover_synth.report.json')); p=r['privacy']; \
	d=p['discovery']; print('epsilon spent', format(p['epsilon_spent'], '.4g'), 'of', p['epsilon_requested'], '| discovery', \
	round(d['epsilon_spent'], 6), '| release budget', round(d['release_epsilon_budget'], 6), '|', \
	sum(c['stage'] == 'discover' for c in r['ledger']), 'discovery charges of', len(r['ledger']), 'in the ledger')"

# The spark engine's tests run in `make test` wherever Java exists: install the spark extra then
# (once); without Java they skip, saying why.
spark: $(STAMP)
	@if [ -n "$(HAVE_JAVA)" ]; then \
	    $(BIN)/python -c "import pyspark" 2>/dev/null || $(PIP_INSTALL) -e '.[dev,spark]'; \
	else echo "make: no java: the spark engine tests will be skipped"; fi

test: $(STAMP) spark layers  # two workers (pytest-xdist; worksteal balances the long tests): the machine has 2 cores; every test is process-safe
	$(BIN)/python -m pytest -q -m "not slow" -n 2 --dist worksteal

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# Privacy mutation harness (not part of `test`): every mutant of tests/mutants/catalogue.py must be caught.
mutants: $(STAMP)
	$(BIN)/python tools/mutants.py

lint: $(STAMP) layers  # ruff, the layering contracts, and mypy over dpsynth/ ([tool.mypy] in pyproject.toml)
	$(BIN)/ruff check dpsynth tests benchmarks tools
	$(BIN)/mypy

docs: $(STAMP)  # regenerate docs/cli.md's reference from --help (tests/test_cli_docs.py checks it)
	$(BIN)/python tools/cli_docs.py

layers: $(STAMP)  # the package's layering contracts (pyproject.toml [tool.importlinter]); part of make test
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run --grid full

bench-quick: $(STAMP)
	$(BIN)/python -m benchmarks.run --grid quick

bench-papers: $(STAMP)
	nice -n 10 $(BIN)/python -m benchmarks.papers.mwem_fig3
	nice -n 10 $(BIN)/python -m benchmarks.papers.mwem_fig5
	nice -n 10 $(BIN)/python -m benchmarks.papers.dualquery_fig3
	nice -n 10 $(BIN)/python -m benchmarks.papers.ireduct_fig5
	nice -n 10 $(BIN)/python -m benchmarks.papers.ireduct_fig10_11
	nice -n 10 $(BIN)/python -m benchmarks.papers.mwem_fig4
	nice -n 10 $(BIN)/python -m benchmarks.papers.dualquery_fig5
	nice -n 10 $(BIN)/python -m benchmarks.papers.ireduct_fig7_9

clean:
	rm -rf $(VENV) demo_out .pytest_cache
