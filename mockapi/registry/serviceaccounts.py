"""ServiceAccounts (core/v1), what kube's service-account controller does for them, and the
ServiceAccount admission plugin's changes to a pod on create.

- **The controller**: every namespace has a ``default`` ServiceAccount, made when the namespace
  is and made again when deleted, for as long as the namespace is not terminating.
- **Admission** (kube v1.32 ``plugin/pkg/admission/serviceaccount/admission.go``, ``Admit``):
  a pod without ``serviceAccountName`` gets ``default``; the named ServiceAccount must exist
  (``pods "x" is forbidden: error looking up service account ns/name: serviceaccount "name" not
  found``); unless ``automountServiceAccountToken: false`` on the pod (which wins) or on the
  ServiceAccount, the pod gets the projected ``kube-api-access-<5 random>`` volume (token,
  ``kube-root-ca.crt``'s ``ca.crt``, the namespace from the downward API; ``TokenVolumeSource``)
  and every init and regular container without a mount at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` a read-only mount of it; a pod without
  ``imagePullSecrets`` gets the ServiceAccount's. A mirror pod (annotation
  ``kubernetes.io/config.mirror``) is left as sent. The simulated kubelet mounts nothing, so the
  volume never stops a pod from running.

Left out: tokens (mockapi has no token controller; with authentication on, the fixture or the
control API mints them, docs/auth.md), the plugin's ``Validate`` rules on mountable secrets and
mirror pods.
"""

from __future__ import annotations

import random

from mockapi import errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy

DEFAULT = "default"
NAMESPACES = errors.GroupResource("", "namespaces")
SERVICE_ACCOUNTS = errors.GroupResource("", "serviceaccounts")
PODS = errors.GroupResource("", "pods")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
_NO_AUTOMOUNT = b'"automountServiceAccountToken":false'
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # names.SimpleNameGenerator's alphabet
_rng = random.Random()
_PAIRS = [a + b for a in _NAME_CHARS for b in _NAME_CHARS]


def _suffix() -> str:
    """Five characters of the alphabet, at random: from one draw of 64 bits (a quarter of the cost of
    ``choices(k=5)``; every pod create draws one). The bias is 27**5 / 2**64, below one in 10**12."""
    n = _rng.getrandbits(64)
    return _PAIRS[n % 729] + _PAIRS[n // 729 % 729] + _NAME_CHARS[n // 531441 % 27]


class ServiceAccountStrategy(Strategy):
    def after_delete(self, cluster: Cluster, obj: dict) -> None:
        if obj["metadata"]["name"] == DEFAULT:
            ensure_default(cluster, obj["metadata"].get("namespace", ""))


def ensure_default(cluster: Cluster, namespace: str) -> None:
    """The service-account controller: the namespace's ``default`` ServiceAccount, if the
    namespace is there and active."""
    stored = cluster.get(NAMESPACES, "", namespace)
    if stored is None or b'"phase":"Terminating"' in stored.raw:
        return
    rt = cluster.types.by_kind("", "v1", "ServiceAccount")
    cluster.create(rt, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": namespace}})


def admit_pod(cluster: Cluster, pod: dict) -> None:
    """The ServiceAccount admission plugin on a pod's create (see the module docstring)."""
    meta, spec = pod["metadata"], pod.get("spec")
    if not isinstance(spec, dict) or MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return
    name = spec.get("serviceAccountName") or DEFAULT
    spec["serviceAccountName"] = spec["serviceAccount"] = name  # v1's deprecated twin follows
    namespace = meta.get("namespace", "")
    stored = cluster.get(SERVICE_ACCOUNTS, namespace, name)
    if stored is None:
        raise errors.forbidden(PODS, meta.get("name", ""), f'error looking up service account {namespace}/{name}: serviceaccount "{name}" not found')
    automount = spec.get("automountServiceAccountToken")
    if automount is True or (automount is None and _NO_AUTOMOUNT not in stored.raw):
        mount_token(spec)
    if not spec.get("imagePullSecrets") and b'"imagePullSecrets"' in stored.raw:
        secrets = stored.load().get("imagePullSecrets") or []
        spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in secrets if isinstance(s, dict)]


def mount_token(spec: dict) -> None:
    """``mountServiceAccountToken``: the token volume (an existing ``kube-api-access-*`` one is
    reused) mounted read-only in every container that has nothing at the token path."""
    # plain loops, the name drawn once a container needs it: every pod create passes here
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        volumes = []
    existing = None
    for v in volumes:
        if isinstance(v, dict) and str(v.get("name", "")).startswith(VOLUME_PREFIX):
            existing = v["name"]
            break
    volume = existing
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if not isinstance(mounts, list):
                mounts = []
            for m in mounts:
                if isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH:
                    break
            else:
                volume = volume or VOLUME_PREFIX + _suffix()
                container["volumeMounts"] = [*mounts, {"mountPath": TOKEN_MOUNT_PATH, "name": volume, "readOnly": True}]
    if volume is not None and existing is None:
        spec["volumes"] = [*volumes, token_volume(volume)]


def token_volume(name: str) -> dict:
    """``TokenVolumeSource``: a bound token (``WarnOnlyBoundTokenExpirationSeconds``, 3607 s),
    the root CA ConfigMap's ``ca.crt``, the namespace; ``defaultMode`` 0644 set explicitly."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": ROOT_CA_CONFIGMAP}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
            ],
        },
    }
