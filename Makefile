.PHONY: demo test lint bench stop bootstrap

bootstrap:
	bash scripts/bootstrap

demo: bootstrap
	uv run --frozen python -m demo

lint:
	uv run --frozen ruff check .
	uv run --frozen ruff format --check .
	uv run --frozen mypy
	uv run --frozen lint-imports

test: bootstrap lint
	url="$$(bash scripts/postgres)" && RESOLVER_TEST_POSTGRES_URL="$$url" uv run --frozen pytest

bench: bootstrap
	uv run --frozen python bench/run_all.py

stop:
	bash scripts/stop
