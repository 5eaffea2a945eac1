# mockapi: a small, real Kubernetes API server for the devmgmtproto.k8s.io prototype.
#
#   docker build -t mockapi .
#   docker run --rm -p 55441:55441 mockapi                              # empty cluster
#   docker run --rm -p 55441:55441 -e MOCKAPI_LOAD=/app/testdata mockapi # with the example data
#   docker run --rm -p 55441:55441 -v mockapi-data:/var/lib/mockapi \
#     -e MOCKAPI_DATA_DIR=/var/lib/mockapi mockapi                      # objects kept across restarts
#
# Zero arguments needed (GitHub Actions service containers cannot pass a command): configure it
# with environment variables — MOCKAPI_PORT, MOCKAPI_LOAD (paths separated by ':'),
# MOCKAPI_LOG_LEVEL, MOCKAPI_LOG_FORMAT (text|json), MOCKAPI_ALLOCATION_MODE
# (immediate|delay|manual), MOCKAPI_ALLOCATION_DELAY, MOCKAPI_ALLOCATION_JITTER,
# MOCKAPI_WATCH_HISTORY, MOCKAPI_MAX_BODY, MOCKAPI_DATA_DIR — or append `mockapi serve` options to
# `docker run`.
# HTTPS and authentication (docs/auth.md): MOCKAPI_GENERATE_CERTS=/certs (mount a directory: the CA,
# the certificates and an admin kubeconfig are written there), MOCKAPI_AUTHENTICATION=1,
# MOCKAPI_AUTHORIZATION_MODE=RBAC, MOCKAPI_TOKEN_AUTH_FILE, MOCKAPI_AUDIT_LOG_PATH=- (stdout), ...
#
# Persistence is opt-in (docs/persistence.md): without MOCKAPI_DATA_DIR the server keeps everything
# in memory, as it always did. /var/lib/mockapi is the volume meant for it (writable by the image's
# user; a bind mount must be writable by uid 10001): set MOCKAPI_DATA_DIR=/var/lib/mockapi and mount
# a named volume there, and every acknowledged write survives a restart of the container.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY mockapi ./mockapi
RUN python3 -m venv /opt/mockapi \
 && /opt/mockapi/bin/pip install --no-compile . \
 && /opt/mockapi/bin/pip uninstall --yes pip \
 && find /opt/mockapi -name '__pycache__' -prune -exec rm -rf {} + \
 && /opt/mockapi/bin/python -m compileall -q /opt/mockapi/lib

FROM ${BASE_IMAGE}
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin mockapi \
 && install -d -o 10001 -g 10001 /var/lib/mockapi
COPY --from=build /opt/mockapi /opt/mockapi
COPY testdata /app/testdata
ENV PATH=/opt/mockapi/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MOCKAPI_HOST=0.0.0.0 \
    MOCKAPI_PORT=55441
WORKDIR /app
USER 10001
VOLUME ["/var/lib/mockapi"]
EXPOSE 55441
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python3", "-c", "import os, ssl, urllib.request; tls = os.environ.get('MOCKAPI_GENERATE_CERTS') or os.environ.get('MOCKAPI_TLS_CERT_FILE'); urllib.request.urlopen('%s://127.0.0.1:%s/readyz' % ('https' if tls else 'http', os.environ.get('MOCKAPI_PORT', '55441')), timeout=2, context=ssl._create_unverified_context() if tls else None)"]
ENTRYPOINT ["mockapi", "serve"]
