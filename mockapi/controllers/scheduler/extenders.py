"""HTTP extenders: kube-scheduler's extender client (``pkg/scheduler/extender.go``) over httpx.

One :class:`HTTPExtender` per configured extender (a :class:`~.config.Extender`), named by its
``urlPrefix`` as kube names it. Each call is ``POST {urlPrefix}/{verb}`` with a JSON body whose keys
are Go's field names (``k8s.io/kube-scheduler/extender/v1``):

- **filter** — ``ExtenderArgs`` ``{"Pod", "Nodes": {"metadata": {}, "items": [...]}, "NodeNames": null}``
  (``nodeCacheCapable``: ``"Nodes": null, "NodeNames": [...]``); the reply is an
  ``ExtenderFilterResult`` (``Nodes`` or ``NodeNames``, ``FailedNodes``,
  ``FailedAndUnresolvableNodes``, ``Error``). A node the reply keeps must be one that was sent.
- **prioritize** — the same ``ExtenderArgs``; the reply a ``HostPriorityList``
  ``[{"Host", "Score"}]``, 0..10 (``MaxExtenderPriority``), which the framework multiplies by the
  extender's weight and by 10 (``MaxNodeScore / MaxExtenderPriority``).
- **preempt** — ``ExtenderPreemptionArgs`` ``{"Pod", "NodeNameToVictims": {node: {"Pods": [...],
  "NumPDBViolations"}}, "NodeNameToMetaVictims": null}`` (``nodeCacheCapable``: ``"NodeNameToVictims":
  null, "NodeNameToMetaVictims": {node: {"Pods": [{"UID"}], "NumPDBViolations"}}``); the reply an
  ``ExtenderPreemptionResult`` ``{"NodeNameToMetaVictims"}`` — always UIDs, turned back into the pods
  the scheduler has on that node (kube's ``convertToVictims``: an unknown node or UID is an error).
- **bind** — ``ExtenderBindingArgs`` ``{"PodName", "PodNamespace", "PodUID", "Node"}``; the reply an
  ``ExtenderBindingResult`` ``{"Error"}``.

Replies are decoded as Go's ``encoding/json`` decodes them: keys match case-insensitively, and a
value of the wrong type is an error. Failures read in Go's words and name the extender's URL:
``Post "http://127.0.0.1:8888/filter": context deadline exceeded (Client.Timeout exceeded while
awaiting headers)``, ``failed filter with extender at URL http://…/filter, code 500``, or the
reply's ``Error`` itself. ``httpTimeout`` bounds the whole call, as Go's ``http.Client.Timeout``.
TLS follows kube's ``makeTransport``: ``enableHTTPS`` without a CA does not verify the server.

Only pods that request (or limit) one of ``managedResources`` go to an extender that lists them
(kube's ``IsInterested``). Every call is reported to ``observe(extender, verb, outcome, seconds)``
(``outcome``: ``success``, ``error`` or ``timeout``) and, when a list is passed, recorded as a
:class:`Call` for the pod's attempt record.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import ssl
import tempfile
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

import orjson

log = logging.getLogger("mockapi.scheduler.extenders")

MAX_EXTENDER_PRIORITY = 10
SCORE_SCALE = 100 // MAX_EXTENDER_PRIORITY  # MaxNodeScore / MaxExtenderPriority
EXTENDER_NAME = "Extender"  # kube's framework.ExtenderName among the plugins that rejected a pod
FILTER, PRIORITIZE, PREEMPT, BIND = "filter", "prioritize", "preempt", "bind"
SUCCESS, ERROR, TIMEOUT = "success", "error", "timeout"

Observer = Callable[[str, str, str, float], None]  # (extender, verb, outcome, seconds)


class ExtenderError(Exception):
    """A call that failed; ``str()`` is the error as kube-scheduler words it."""

    def __init__(self, message: str, outcome: str = ERROR) -> None:
        super().__init__(message)
        self.outcome = outcome


@dataclass(slots=True)
class Call:
    """One HTTP call to an extender, as the attempt record shows it."""

    extender: str
    verb: str
    url: str
    seconds: float
    outcome: str
    error: str = ""
    ignored: bool = False

    def as_dict(self) -> dict:
        found = {"extender": self.extender, "verb": self.verb, "url": self.url, "latencyMs": round(self.seconds * 1000, 3), "outcome": self.outcome}
        if self.error:
            found["error"] = self.error
        if self.ignored:
            found["ignored"] = True
        return found


@dataclass(slots=True)
class Victims:
    """kube's ``extenderv1.Victims``: the pods to evict on one node for the preemptor to fit, and
    how many of them it would evict against a PodDisruptionBudget."""

    pods: list[dict]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class FilterResult:
    kept: list[str]  # node names, in the reply's order
    failed: dict[str, str]
    unresolvable: dict[str, str]


class HTTPExtender:
    def __init__(self, cfg, *, observe: Observer | None = None) -> None:
        """``cfg``: a :class:`~.config.Extender`."""
        self.config = cfg
        self.name = cfg.url_prefix
        self.weight = cfg.weight
        self.ignorable = cfg.ignorable
        self.node_cache_capable = cfg.node_cache_capable
        self.managed = frozenset(r.name for r in cfg.managed_resources)
        self.observe = observe
        self._ssl = tls_context(cfg)
        self._server_name = (cfg.tls_config or {}).get("serverName") or ""
        self._client = self._http()  # now, not in the first pod's cycle (httpx's import and set-up: ~0.1 s)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_preempter(self) -> bool:
        """kube's ``SupportsPreemption``: a ``preemptVerb`` is set."""
        return bool(self.config.preempt_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def is_interested(self, pod: dict) -> bool:
        """kube's ``IsInterested``: no managed resources, or the pod requests or limits one of them
        in a container or an init container."""
        if not self.managed:
            return True
        spec = pod.get("spec") or {}
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = container.get("resources") or {}
            if any(name in self.managed for part in ("requests", "limits") for name in (resources.get(part) or {})):
                return True
        return False

    # ------------------------------------------------------------------ the verbs
    async def filter(self, pod: dict, nodes: list[dict], *, calls: list[Call] | None = None) -> FilterResult:
        reply = await self._send(FILTER, self.config.filter_verb, self._args(pod, nodes), calls)
        reply = _object(reply, "ExtenderFilterResult")
        error = _string(_field(reply, "Error"), "ExtenderFilterResult.Error")
        if error:
            raise ExtenderError(error)
        sent = {node["metadata"]["name"] for node in nodes}
        names = _field(reply, "NodeNames")
        listed = _field(reply, "Nodes")
        if self.node_cache_capable and names is not None:
            kept = [_string(n, "ExtenderFilterResult.NodeNames") for n in _array(names, "ExtenderFilterResult.NodeNames")]
        elif listed is not None:
            items = _field(_object(listed, "ExtenderFilterResult.Nodes"), "items") or []
            kept = [_node_name(item) for item in _array(items, "ExtenderFilterResult.Nodes.items")]
        else:
            kept = []
        for name in kept:
            if name not in sent:
                raise ExtenderError(f"extender {quote(self.name)} claims a filtered node {quote(name)} which is not found in the input node list")
        failed = _failed_map(_field(reply, "FailedNodes"), "FailedNodes")
        unresolvable = _failed_map(_field(reply, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes")
        return FilterResult(kept, failed, unresolvable)

    async def prioritize(self, pod: dict, nodes: list[dict], *, calls: list[Call] | None = None) -> dict[str, int]:
        """Host → the extender's score (0..10, unscaled; the caller weighs it)."""
        reply = await self._send(PRIORITIZE, self.config.prioritize_verb, self._args(pod, nodes), calls)
        scores: dict[str, int] = {}
        for entry in _array(reply, "HostPriorityList"):
            entry = _object(entry, "HostPriority")
            host = _string(_field(entry, "Host"), "HostPriority.Host")
            score = _field(entry, "Score")
            if score is None:
                score = 0
            if isinstance(score, bool) or not isinstance(score, int):
                raise ExtenderError(f"json: cannot unmarshal {_json_type(score)} into Go struct field HostPriority.Score of type int64")
            scores[host] = score
        return scores

    async def process_preemption(self, pod: dict, victims: dict[str, Victims], snapshot, *, calls: list[Call] | None = None) -> dict[str, Victims]:
        """kube's ``ProcessPreemption``: the candidates (node → victims) the extender keeps, with the
        victims it chose there, as pods of ``snapshot`` (a :class:`~.nodeinfo.Snapshot`). The
        extender may answer nodes it was not sent if the snapshot has them, as kube allows."""
        reply = await self._send(PREEMPT, self.config.preempt_verb, self._preemption_args(pod, victims), calls)
        reply = _object(reply, "ExtenderPreemptionResult")
        found = _field(reply, "NodeNameToMetaVictims")
        if found is not None and not isinstance(found, dict):
            raise ExtenderError(f"json: cannot unmarshal {_json_type(found)} into Go struct field ExtenderPreemptionResult.NodeNameToMetaVictims of type map[string]*v1.MetaVictims")
        return {node: self._victims(node, meta, snapshot) for node, meta in (found or {}).items()}

    def _preemption_args(self, pod: dict, victims: dict[str, Victims]) -> dict:
        if self.node_cache_capable:  # the extender knows the pods: their UIDs only
            meta = {node: {"Pods": [{"UID": p["metadata"].get("uid", "")} for p in v.pods], "NumPDBViolations": v.num_pdb_violations} for node, v in victims.items()}
            return {"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        whole = {node: {"Pods": v.pods, "NumPDBViolations": v.num_pdb_violations} for node, v in victims.items()}
        return {"Pod": pod, "NodeNameToVictims": whole, "NodeNameToMetaVictims": None}

    def _victims(self, node: str, meta, snapshot) -> Victims:
        """kube's ``convertToVictims`` for one node: each UID looked up among the node's pods."""
        info = snapshot.get(node)
        if info is None:
            raise ExtenderError(f"nodeinfo not found for node name {quote(node)}")
        meta = _object(meta, "v1.MetaVictims")
        violations = _field(meta, "NumPDBViolations")
        if violations is None:
            violations = 0
        if isinstance(violations, bool) or not isinstance(violations, int):
            raise ExtenderError(f"json: cannot unmarshal {_json_type(violations)} into Go struct field MetaVictims.NumPDBViolations of type int64")
        by_uid = {p["metadata"].get("uid"): p for p in info.pods.values()}
        pods = []
        for entry in _array(_field(meta, "Pods"), "MetaVictims.Pods"):
            uid = _string(_field(_object(entry, "v1.MetaPod"), "UID"), "MetaPod.UID")
            pod = by_uid.get(uid) if uid else None
            if pod is None:  # Go prints the *MetaPod with %v: &{<uid>}
                raise ExtenderError(f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: {node}, but the pod is not found on that node")
            pods.append(pod)
        return Victims(pods, violations)

    async def bind(self, pod: dict, node_name: str, *, calls: list[Call] | None = None) -> None:
        meta = pod["metadata"]
        args = {"PodName": meta["name"], "PodNamespace": meta.get("namespace", ""), "PodUID": meta.get("uid", ""), "Node": node_name}
        reply = _object(await self._send(BIND, self.config.bind_verb, args, calls), "ExtenderBindingResult")
        error = _string(_field(reply, "Error"), "ExtenderBindingResult.Error")
        if error:
            raise ExtenderError(error)

    def _args(self, pod: dict, nodes: list[dict]) -> dict:
        if self.node_cache_capable:
            return {"Pod": pod, "Nodes": None, "NodeNames": [node["metadata"]["name"] for node in nodes]}
        return {"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}

    # ------------------------------------------------------------------ HTTP
    async def _send(self, verb: str, action: str, args: dict, calls: list[Call] | None):
        url = self.name.rstrip("/") + "/" + action
        started = time.perf_counter()
        outcome, error = SUCCESS, ""
        try:
            return await self._post(url, action, orjson.dumps(args))
        except ExtenderError as exc:
            outcome, error = exc.outcome, str(exc)
            raise
        finally:
            seconds = time.perf_counter() - started
            log.debug("extender %s %s %s: %s in %.1f ms%s", self.name, verb, url, outcome, seconds * 1000, f": {error}" if error else "")
            if calls is not None:
                calls.append(Call(self.name, verb, url, seconds, outcome, error))
            if self.observe is not None:
                try:
                    self.observe(self.name, verb, outcome, seconds)
                except Exception:  # noqa: BLE001 - a metrics hook never fails a pod
                    log.exception("extender call observer failed")

    async def _post(self, url: str, action: str, body: bytes):
        if self._client is None:
            self._client = self._http()
        client = self._client
        extensions = {"sni_hostname": self._server_name} if self._server_name else None
        try:
            async with asyncio.timeout(self.config.http_timeout):
                response = await client.post(url, content=body, headers={"Content-Type": "application/json"}, extensions=extensions)
        except TimeoutError:
            raise ExtenderError(f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', TIMEOUT) from None
        except Exception as exc:  # noqa: BLE001 - httpx's and ssl's errors, in Go's words
            raise ExtenderError(f'Post "{url}": {_transport_error(url, exc)}') from None
        if response.status_code != 200:
            raise ExtenderError(f"failed {action} with extender at URL {url}, code {response.status_code}")
        return _decode(response.content)

    def _http(self):
        import httpx  # only a scheduler with extenders needs it

        plain = self.name.startswith("http://")  # no TLS: spare loading the CA bundle
        verify = self._ssl if self._ssl is not None else not plain
        return httpx.AsyncClient(verify=verify, timeout=None, trust_env=False)

    async def aclose(self) -> None:
        """Close the connections; a later call opens new ones."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def mark_ignored(calls: list | None, extender: HTTPExtender) -> None:
    """Mark the extender's last call (just failed) as ignored: an ignorable extender's failure."""
    if calls and calls[-1].extender == extender.name:
        calls[-1].ignored = True


def build(configs: list, *, observe: Observer | None = None) -> list[HTTPExtender]:
    """The extenders in kube's order: as configured, the ignorable ones moved to the end
    (``buildExtenders``)."""
    built = [HTTPExtender(cfg, observe=observe) for cfg in configs]
    return [e for e in built if not e.ignorable] + [e for e in built if e.ignorable]


# ------------------------------------------------------------------------------ TLS
def tls_context(cfg) -> ssl.SSLContext | None:
    """kube's ``makeTransport``: ``tlsConfig`` (``insecure``, ``caFile``/``caData``,
    ``certFile``/``keyFile`` or ``certData``/``keyData``); ``enableHTTPS`` without a CA is insecure.
    None: the system's defaults."""
    tls = cfg.tls_config or {}
    ca_file, ca_data = tls.get("caFile") or "", _data(tls.get("caData"))
    insecure = bool(tls.get("insecure")) or (cfg.enable_https and not ca_file and not ca_data)
    has_cert = tls.get("certFile") or tls.get("certData")
    if not (insecure or ca_file or ca_data or has_cert):
        return None
    context = ssl.create_default_context(cafile=ca_file or None, cadata=ca_data.decode() if ca_data else None)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if has_cert:
        _load_cert(context, tls)
    return context


def _load_cert(context: ssl.SSLContext, tls: dict) -> None:
    if tls.get("certFile"):
        context.load_cert_chain(tls["certFile"], tls.get("keyFile") or None)
        return
    with tempfile.TemporaryDirectory() as folder:  # ssl loads a client certificate from files only
        cert, key = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
        with open(cert, "wb") as out:
            out.write(_data(tls.get("certData")))
        with open(key, "wb") as out:
            out.write(_data(tls.get("keyData")))
        context.load_cert_chain(cert, key)


def _data(value) -> bytes:
    """A ``[]byte`` field as YAML/JSON carries it: base64 text."""
    if not value:
        return b""
    return base64.b64decode(value, validate=True) if isinstance(value, str) else bytes(value)


# ------------------------------------------------------------------------------ decoding
def _decode(content: bytes):
    if not content.strip():
        raise ExtenderError("EOF")
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        first = content.lstrip()[:1].decode(errors="replace")
        if first and first not in '{["-0123456789tfn':
            raise ExtenderError(f"invalid character {first!r} looking for beginning of value") from None
        raise ExtenderError(f"invalid JSON in the extender's reply: {exc}") from None


def _field(obj: dict, name: str):
    """Go's decoder: the exact key, else any key equal under case folding."""
    if name in obj:
        return obj[name]
    folded = name.casefold()
    for key, value in obj.items():
        if key.casefold() == folded:
            return value
    return None


def quote(text: str) -> str:
    """Go's ``%q``."""
    return orjson.dumps(text).decode()


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value}"
    return {dict: "object", list: "array", str: "string"}.get(type(value), "value")


def _object(value, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ExtenderError(f"json: cannot unmarshal {_json_type(value)} into Go value of type {what}")
    return value


def _array(value, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ExtenderError(f"json: cannot unmarshal {_json_type(value)} into Go value of type {what}")
    return value


def _string(value, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ExtenderError(f"json: cannot unmarshal {_json_type(value)} into Go struct field {what} of type string")
    return value


def _node_name(item) -> str:
    meta = _field(_object(item, "v1.Node"), "metadata")
    return _string(_field(_object(meta, "v1.ObjectMeta"), "name"), "ObjectMeta.name")


def _failed_map(value, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ExtenderError(f"json: cannot unmarshal {_json_type(value)} into Go struct field ExtenderFilterResult.{what} of type v1.FailedNodesMap")
    return {node: _string(message, f"ExtenderFilterResult.{what}") for node, message in value.items()}


def _transport_error(url: str, exc: Exception) -> str:
    """What Go's transport would say: ``dial tcp 127.0.0.1:1: connect: connection refused``,
    ``tls: failed to verify certificate: x509: …``."""
    parts = urlsplit(url)
    address = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    text = str(exc) or type(exc).__name__
    cause = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"tls: failed to verify certificate: x509: {cause.verify_message or cause.reason}"
        if isinstance(cause, ssl.SSLError):
            return f"remote error: tls: {cause.reason or cause}"
        cause = cause.__cause__ or cause.__context__
    if "refused" in text.lower() or "all connection attempts failed" in text.lower():
        return f"dial tcp {address}: connect: connection refused"
    if type(exc).__name__ in ("ConnectError", "ConnectTimeout"):
        return f"dial tcp {address}: {text}"
    return text
