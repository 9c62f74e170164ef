# The service image for docker-compose: web, worker and beat all run from it.
# The sandbox image is separate (sandbox/Dockerfile).
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends git docker.io \
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir uv
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
COPY resolver resolver
COPY integrations integrations
COPY sandbox sandbox
# `--build-arg EXTRAS=tracing` adds OpenTelemetry (traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set).
ARG EXTRAS=""
RUN uv sync --frozen --no-dev --compile-bytecode ${EXTRAS:+--extra $EXTRAS}
ENV PATH="/app/.venv/bin:$PATH"
CMD ["resolver", "serve", "--host", "0.0.0.0", "--port", "8000"]
