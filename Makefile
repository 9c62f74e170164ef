.PHONY: demo test lint bench stop bootstrap contend

# uv from PATH, else the copy scripts/bootstrap installs under var/tools on a fresh machine
# (where ~/.local/bin is not on PATH and pip may not install for the user).
UV ?= $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/var/tools/bin/uv)
# uv trusts the system's certificate store, as pip and git do (where a proxy's CA lives); the
# second name is what uv releases before 0.9 read.
export UV_SYSTEM_CERTS ?= 1
export UV_NATIVE_TLS ?= 1

bootstrap:
	bash scripts/bootstrap

demo: bootstrap
	$(UV) run --frozen python -m demo

lint:
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen mypy
	$(UV) run --frozen lint-imports

# The suite in four groups by cost, the last under gVisor, each in parallel (scripts/test);
# PYTEST_ARGS go to each.
test: bootstrap lint
	url="$$(bash scripts/postgres)" && chromium="$$(bash scripts/browser)" && \
		RESOLVER_TEST_POSTGRES_URL="$$url" RESOLVER_TEST_CHROMIUM="$$chromium" \
		bash scripts/test $(UV) run --frozen pytest -- $(PYTEST_ARGS)

# The suite as `make test` runs it (its groups, in parallel), RUNS times in a row, with every
# core kept busy by a busy loop.
RUNS ?= 5
contend: bootstrap
	url="$$(bash scripts/postgres)" && chromium="$$(bash scripts/browser)" && \
		RESOLVER_TEST_POSTGRES_URL="$$url" RESOLVER_TEST_CHROMIUM="$$chromium" \
		bash scripts/contend $(RUNS) -- bash scripts/test $(UV) run --frozen pytest -- $(PYTEST_ARGS)

bench: bootstrap
	$(UV) run --frozen python bench/run_all.py

# Every bench at a tiny size, seconds each (CI runs it): fails, naming the bench, when one no
# longer prints its table. The figures mean nothing at that size.
.PHONY: bench-smoke
bench-smoke: bootstrap
	$(UV) run --frozen python bench/run_all.py --smoke

stop:
	bash scripts/stop
