#!/usr/bin/env python3
"""A kube-scheduler HTTP extender with pluggable agents (in the spirit of kube-safe-scheduler).

Standard library only. It serves kube-scheduler's extender API (``k8s.io/kube-scheduler/extender/v1``)
under ``/scheduler``:

- ``POST /scheduler/filter``     ``ExtenderArgs`` → ``ExtenderFilterResult``
- ``POST /scheduler/prioritize`` ``ExtenderArgs`` → ``HostPriorityList`` (scores 0..10)

Works with ``nodeCacheCapable`` off (the full Node objects come with each call): the agents read
each node's labels and annotations. An *agent* is a small class with a ``NAME`` and a ``filter``
(a predicate: ``None`` when the node passes, else the reason) and/or a ``score`` (0..10). The agents
that run are named in ``AGENTS`` (comma-separated; ``name:weight`` weighs a scoring agent):

- ``label``            — only nodes labelled ``NODE_LABEL`` (``key=value`` or ``key``; default
                         ``extender.example.com/pool=fast``)
- ``load``             — only nodes whose annotation ``example.com/load`` (0..100, as a monitoring
                         agent would report it) is at most ``MAX_LOAD`` (default 80)
- ``least-loaded``     — prefers the lowest ``example.com/load``
- ``most-free-devices``— prefers the most free devices: the annotation ``example.com/free-devices``,
                         else the node's allocatable ``DEVICE_RESOURCE`` (default ``example.com/gpu``)

Environment: ``HTTP_PORT`` (default 8888; ``0`` picks a free one), ``HTTP_HOST`` (127.0.0.1),
``AGENTS`` (default ``load,least-loaded``), ``LOG_LEVEL`` (``TRACE``, ``DEBUG``, ``INFO``,
``WARNING``, ``ERROR``, ``ALERT``; default ``INFO``). The first line on stdout is
``listening on http://HOST:PORT/scheduler``.

Add an agent: write a class like those below and add it to ``AGENT_TYPES``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/scheduler"
MAX_PRIORITY = 10
LOAD = "example.com/load"
FREE_DEVICES = "example.com/free-devices"
TRACE = 5
LEVELS = {"TRACE": TRACE, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR, "ALERT": logging.CRITICAL}

log = logging.getLogger("extender")


# ------------------------------------------------------------------------------ agents
def labels(node: dict) -> dict:
    return (node.get("metadata") or {}).get("labels") or {}


def annotation_number(node: dict, key: str) -> float | None:
    value = ((node.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class LabelAgent:
    """Predicate: the node carries the label."""

    NAME = "label"

    def __init__(self) -> None:
        key, _, value = os.environ.get("NODE_LABEL", "extender.example.com/pool=fast").partition("=")
        self.key, self.value = key, value

    def filter(self, pod: dict, node: dict) -> str | None:
        found = labels(node).get(self.key)
        if found is not None and (not self.value or found == self.value):
            return None
        return f"node(s) didn't have label {self.key}={self.value}" if self.value else f"node(s) didn't have label {self.key}"


class LoadAgent:
    """Predicate: the node's reported load is at most MAX_LOAD (a node that reports none passes)."""

    NAME = "load"

    def __init__(self) -> None:
        self.max_load = float(os.environ.get("MAX_LOAD", "80"))

    def filter(self, pod: dict, node: dict) -> str | None:
        load = annotation_number(node, LOAD)
        if load is None or load <= self.max_load:
            return None
        return f"node(s) had load above {self.max_load:g}"


class LeastLoadedAgent:
    """Priority: 10 for an idle node, 0 for a node at 100 (unknown load: 5)."""

    NAME = "least-loaded"

    def score(self, pod: dict, node: dict) -> int:
        load = annotation_number(node, LOAD)
        if load is None:
            return MAX_PRIORITY // 2
        return max(0, min(MAX_PRIORITY, round(MAX_PRIORITY - load / 10)))


class MostFreeDevicesAgent:
    """Priority: the node with the most free devices gets 10, the others in proportion."""

    NAME = "most-free-devices"

    def __init__(self) -> None:
        self.resource = os.environ.get("DEVICE_RESOURCE", "example.com/gpu")

    def free(self, node: dict) -> float:
        found = annotation_number(node, FREE_DEVICES)
        if found is not None:
            return found
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        try:
            return float(allocatable.get(self.resource, 0))
        except ValueError:
            return 0.0

    def scores(self, pod: dict, nodes: list[dict]) -> dict[str, int]:
        free = {node["metadata"]["name"]: self.free(node) for node in nodes}
        most = max(free.values(), default=0)
        return {name: round(MAX_PRIORITY * count / most) if most else 0 for name, count in free.items()}


AGENT_TYPES = {cls.NAME: cls for cls in (LabelAgent, LoadAgent, LeastLoadedAgent, MostFreeDevicesAgent)}


def load_agents(spec: str) -> list[tuple[object, int]]:
    agents = []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, weight = item.partition(":")
        if name not in AGENT_TYPES:
            raise SystemExit(f"extender: unknown agent {name!r} (known: {', '.join(AGENT_TYPES)})")
        agents.append((AGENT_TYPES[name](), int(weight or 1)))
    return agents


# ------------------------------------------------------------------------------ the verbs
class Extender:
    def __init__(self, agents: list[tuple[object, int]]) -> None:
        self.filters = [agent for agent, _ in agents if hasattr(agent, "filter")]
        self.scorers = [(agent, weight) for agent, weight in agents if hasattr(agent, "score") or hasattr(agent, "scores")]

    def filter(self, args: dict) -> dict:
        pod, nodes = args.get("Pod") or {}, (args.get("Nodes") or {}).get("items") or []
        kept, failed = [], {}
        for node in nodes:
            reason = next((why for why in (agent.filter(pod, node) for agent in self.filters) if why), None)
            if reason is None:
                kept.append(node)
            else:
                failed[node["metadata"]["name"]] = reason
        log.info("filter %s: kept %s, failed %s", pod_name(pod), [n["metadata"]["name"] for n in kept], failed)
        return {"Nodes": {"items": kept}, "FailedNodes": failed, "Error": ""}

    def prioritize(self, args: dict) -> list[dict]:
        pod, nodes = args.get("Pod") or {}, (args.get("Nodes") or {}).get("items") or []
        totals = {node["metadata"]["name"]: 0.0 for node in nodes}
        weights = sum(weight for _, weight in self.scorers) or 1
        for agent, weight in self.scorers:
            scores = agent.scores(pod, nodes) if hasattr(agent, "scores") else {n["metadata"]["name"]: agent.score(pod, n) for n in nodes}
            log.log(TRACE, "agent %s scored %s: %s", agent.NAME, pod_name(pod), scores)
            for name, score in scores.items():
                totals[name] += weight * score
        reply = [{"Host": name, "Score": round(total / weights)} for name, total in totals.items()]
        log.info("prioritize %s: %s", pod_name(pod), {entry["Host"]: entry["Score"] for entry in reply})
        return reply


def pod_name(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def handler_class(extender: Extender):
    verbs = {f"{PREFIX}/filter": extender.filter, f"{PREFIX}/prioritize": extender.prioritize}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            verb = verbs.get(self.path)
            if verb is None:
                self.reply(404, {"Error": f"no verb at {self.path}"})
                return
            try:
                args = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                log.debug("%s %s", self.path, json.dumps(args)[:2000])
                self.reply(200, verb(args))
            except Exception as exc:  # noqa: BLE001 - the scheduler reads the error
                log.exception("%s failed", self.path)
                self.reply(200, {"Error": f"extender: {exc}"} if self.path.endswith("filter") else [])

        def reply(self, code: int, body) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, fmt: str, *args) -> None:
            log.log(TRACE, fmt, *args)

    return Handler


def main() -> None:
    logging.addLevelName(TRACE, "TRACE")
    level = os.environ.get("LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=LEVELS.get(level, logging.INFO), format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    agents = load_agents(os.environ.get("AGENTS", "load,least-loaded"))
    server = ThreadingHTTPServer((os.environ.get("HTTP_HOST", "127.0.0.1"), int(os.environ.get("HTTP_PORT", "8888"))), handler_class(Extender(agents)))
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}{PREFIX}", flush=True)
    log.info("agents: %s", ", ".join(f"{agent.NAME}:{weight}" for agent, weight in agents))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
