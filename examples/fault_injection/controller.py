"""A controller step that retries the way a Kubernetes client should (docs/fault-injection.md).

``set_label`` labels a ConfigMap with optimistic concurrency: it reads the object and patches it
at the resourceVersion it read. A 409 Conflict means someone wrote in between: read again and
retry at once. A 429 means slow down: wait as long as Retry-After says. A 5xx or a connection
broken mid-response may be transient: back off and retry. Anything else (403, 404, 422) is an
answer, not an accident: raise it. Retries stop after ``attempts``.
"""

from __future__ import annotations

import time

from kubernetes import client
from kubernetes.client.rest import ApiException
from urllib3.exceptions import ProtocolError

RETRIED = {409, 429, 500, 502, 503, 504}


def set_label(core: client.CoreV1Api, namespace: str, name: str, key: str, value: str, *, attempts: int = 5, backoff: float = 0.05) -> int:
    """Set ``key=value`` on ConfigMap ``namespace/name``; returns the attempts it took."""
    for attempt in range(1, attempts + 1):
        try:
            current = core.read_namespaced_config_map(name, namespace)
            patch = {"metadata": {"resourceVersion": current.metadata.resource_version, "labels": {key: value}}}
            core.patch_namespaced_config_map(name, namespace, patch)
            return attempt
        except ApiException as exc:
            if exc.status not in RETRIED or attempt == attempts:
                raise
            time.sleep(delay(exc, attempt, backoff))
        except ProtocolError:  # the connection broke mid-response: the write may have landed
            if attempt == attempts:
                raise
            time.sleep(backoff * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def delay(exc: ApiException, attempt: int, backoff: float) -> float:
    """Seconds to wait before the next attempt."""
    if exc.status == 409:
        return 0.0  # a fresh read is all it takes
    retry_after = (exc.headers or {}).get("Retry-After")
    if retry_after is not None:
        return float(retry_after)
    return backoff * 2 ** (attempt - 1)
