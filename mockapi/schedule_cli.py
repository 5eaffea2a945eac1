"""``mockapi schedule -f pod.yaml`` and ``mockapi scheduling NAMESPACE/NAME``: where a pod would go and
why, and what the scheduler found for a pod last time (SCHEDULER.md "The ``schedule`` CLI").

``schedule`` reads the cluster — from a server through :class:`~mockapi.client.KubeClient`
(``--server``/``--kubeconfig``, read-only), or from manifests (``--from``, loaded into a throwaway
in-process registry, so they are validated and defaulted as ``mockapi serve --load`` would) — and
runs the pod's scheduling cycle on a copy of it (:mod:`mockapi.controllers.dryrun`), writing
nothing. ``scheduling`` prints a running server's record of a pod's last scheduling attempt
(``GET /mockapi/v1/scheduling/{namespace}/{name}``). Both print the same layout (:func:`render`),
or the data itself with ``-o yaml|json``.

Exit codes: ``schedule`` 0 when a node was chosen, 1 when none (the reason also on stderr, one
line), 2 for a bad invocation (a missing or unreadable file, not one Pod, a bad
``--scheduler-config``); ``scheduling`` 0 when a record was printed. Failures are raised as
:class:`Failure` for the command line to print as one line.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import yaml

from mockapi import decoding, errors

NOT_EVALUATED = "not evaluated (enough feasible nodes were found first: percentageOfNodesToScore)"


class Failure(Exception):
    """What ``mockapi schedule``/``scheduling`` says on stderr (one line), exiting with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------ the commands
def run(args) -> int:
    if args.command == "scheduling":
        return last_attempt(args)
    return schedule(args)


def schedule(args) -> int:
    """``mockapi schedule``: the dry run's report on stdout; exit 0 with a node, 1 without."""
    from mockapi.controllers import dryrun

    if args.sources and (args.server or args.kubeconfig or args.context):
        raise Failure("--from reads manifests instead of a server: give --from, or --server/--kubeconfig, not both", code=2)
    pod = read_pod(args.filename)
    config = _config(args.scheduler_config)
    options = {"config": config, "policy": args.allocation_policy, "limits": _limits(args)}
    try:
        if args.sources:
            report = _offline(args.sources, pod, options)
        else:
            report = _against_server(args, pod, options)
    except dryrun.InputError as exc:
        raise Failure(str(exc)) from None
    _print(report, args.output)
    if not report["node"]:
        print(f"mockapi schedule: {report['message']}", file=sys.stderr)
        return 1
    return 0


def last_attempt(args) -> int:
    """``mockapi scheduling``: the server's record of the pod's last scheduling attempt."""
    from mockapi.client import KubeClient
    from mockapi.controllers.allocator import standalone

    namespace, name = _pod_key(args.pod, args.namespace)
    client = KubeClient.connect(server=args.server, kubeconfig=args.kubeconfig, context=args.context)
    try:
        with standalone._reaching(client.host):  # transport failures name the server, as explain's do
            record = standalone._complete(client._request("GET", f"/mockapi/v1/scheduling/{namespace}/{name}"))
    finally:
        client.close()
    _print(record, args.output)
    return 0


def _pod_key(text: str, namespace: str) -> tuple[str, str]:
    parts = text.split("/")
    if len(parts) == 1 and parts[0]:
        return namespace, parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise Failure(f"a pod is NAMESPACE/NAME or NAME (with -n), not {text!r}", code=2)


def _config(path: Path | None):
    from mockapi.controllers.scheduler import config as config_

    try:
        return config_.load(path)
    except config_.ConfigError as exc:
        raise Failure(str(exc), code=2) from None


def _limits(args):
    from mockapi.controllers.allocator import Limits

    return Limits(args.allocation_budget_steps, args.allocation_budget_seconds)


# ------------------------------------------------------------------ the inputs
def read_pod(path: str) -> dict:
    """The one Pod in ``path`` (``-``: stdin), as a dict; :class:`Failure` (code 2) otherwise."""
    source = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        raise Failure(f"{source}: {exc.strerror}", code=2) from None
    try:
        documents = [d for d in decoding.load_yaml_documents(text) if d is not None]
    except errors.StatusError as exc:
        raise Failure(f"{source}: {exc.message}", code=2) from None
    pods = [d for d in documents if isinstance(d, dict) and d.get("kind") == "Pod"]
    if len(documents) == 1 and not pods:
        found = documents[0]
        what = f"kind {found.get('kind')!r}" if isinstance(found, dict) else f"a {type(found).__name__}"
        raise Failure(f"{source}: not a Pod ({what})", code=2)
    if len(pods) != 1 or len(documents) != 1:
        raise Failure(f"{source}: holds {len(documents)} documents, {len(pods)} of them Pods; give exactly one Pod", code=2)
    if pods[0].get("apiVersion") != "v1":
        raise Failure(f"{source}: not a Pod (apiVersion {pods[0].get('apiVersion')!r}, not 'v1')", code=2)
    return pods[0]


def _offline(sources: list[Path], pod: dict, options: dict) -> dict:
    """The cluster in ``sources`` as ``mockapi serve --load`` would hold it (validated, defaulted),
    in a registry of this process only; the pod validated there too."""
    import asyncio

    from mockapi import app, loader
    from datetime import datetime, timezone

    from mockapi import clock as clocks
    from mockapi.client import LocalClient
    from mockapi.controllers import dryrun
    from mockapi.settings import Settings

    for path in sources:
        if not path.exists():
            raise Failure(f"{path}: no such file or directory", code=2)
    try:
        # one instant for every manifest: they have no creation times of their own, and a load that
        # crossed a second would reorder the claims the allocator takes first from run to run
        frozen = clocks.FakeClock(datetime.now(timezone.utc).replace(microsecond=0))
        server = app.build(Settings(load=list(sources)), clock=frozen)
    except loader.LoadError as exc:
        raise Failure(str(exc)) from None
    _validate(server.registry, pod)
    return asyncio.run(dryrun.schedule(LocalClient(server.registry), pod, as_served=True, **options))


def _validate(registry, pod: dict) -> None:
    """Create the pod in ``registry`` with ``dryRun`` (a throwaway registry: a pod of the same name
    among the manifests, the one being scheduled again, is deleted from it first): the API's own
    validation, its field errors a usage error."""
    from mockapi.registry.options import DeleteOptions, WriteOptions

    rt = registry.types.by_kind("", "v1", "Pod")
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), dict) else {}
    namespace, name = meta.get("namespace") or "default", meta.get("name")
    for attempt in range(2):
        try:
            registry.create(rt, namespace, copy.deepcopy(pod), WriteOptions(dry_run=True, field_validation="Strict"))
            return
        except errors.StatusError as exc:
            if exc.reason == "AlreadyExists" and name and attempt == 0:
                registry.delete(rt, namespace, name, DeleteOptions(grace_period_seconds=0))
                continue
            raise Failure(f"the pod: {exc.message}", code=2) from None


def _against_server(args, pod: dict, options: dict) -> dict:
    from mockapi.client import KubeClient
    from mockapi.controllers import dryrun
    from mockapi.controllers.allocator import standalone

    client = KubeClient.connect(server=args.server, kubeconfig=args.kubeconfig, context=args.context)
    try:
        # the allocator's commands' check (the server answers and serves the device kinds) and runner
        return standalone._complete(standalone._checked(client, dryrun.schedule(client, pod, **options)))
    finally:
        client.close()


# ------------------------------------------------------------------ the output
def _print(report: dict, output: str | None) -> None:
    if output == "json":
        print(json.dumps(report, indent=2))
    elif output == "yaml":
        print(yaml.safe_dump(report, sort_keys=False, width=120), end="")
    else:
        print(render(report), end="")


def render(report: dict) -> str:
    """The report (a dry run's, or a server's attempt record) for people: the device claims, the
    filter verdict per node, the score table, the result."""
    lines = [_heading(report)]
    if report.get("replacing"):
        lines.append(_replacing(report["replacing"]))
    if report.get("allocatedFirst"):
        lines += ["", "Allocated first, as mockapi serve's allocator would (in memory)"] + [f"  {_first(item)}" for item in report["allocatedFirst"]]
    if report.get("claims"):
        lines += ["", "Device claims"]
        for claim in report["claims"]:
            lines += _claim(claim)
    lines += ["", "Filter"] + _filter(report)
    if report.get("scores"):
        lines += ["", "Scores (each plugin's normalized score x its weight; an extender's reply x weight x 10)"] + _scores(report["scores"])
    if report.get("extenderCalls"):
        lines += ["", "Extender calls"] + [f"  {_call(call)}" for call in report["extenderCalls"]]
    lines += ["", "Result"] + _result(report)
    return "\n".join(lines) + "\n"


def _heading(report: dict) -> str:
    pod = report["pod"]
    what = "Dry run of pod" if report.get("dryRun") else f"Last scheduling attempt ({report.get('time') or 'time unknown'}) of pod"
    return f"{what} {pod['namespace']}/{pod['name']}, scheduler {report['schedulerName']}: {report['nodes']} nodes, {report['feasibleNodes']} feasible"


def _replacing(left_out: dict) -> str:
    where = f" on {left_out['node']}" if left_out["node"] else ""
    claims = f" with its claims {', '.join(left_out['claims'])}" if left_out["claims"] else ""
    return f"Left out: the pod {left_out['pod']} already there{where}{claims} (this is where it would go if it came again)"


def _first(item: dict) -> str:
    if "node" in item:
        where = item["node"] or "network-attached pools"
        return f"{item['claim']} on {where}: {', '.join(item['devices'])}"
    return f"{item['claim']}: {item['reason']}: {item['message']}"


def _claim(claim: dict) -> list[str]:
    origin = {"claim": "the pod's embedded claim", "claimName": "named by the pod", "claimTemplateName": f"from DeviceClaimTemplate {claim.get('template')}"}[claim["source"]]
    made = ", made in memory as the claims controller would" if claim.get("madeInMemory") else ""
    missing = "" if claim.get("found", True) else ": not found"
    lines = [f"  {claim['entry']}: DeviceClaim {claim['claim']} ({origin}{made}){missing}"]
    allocated = claim.get("allocated", "absent")
    if isinstance(allocated, dict):
        lines.append(f"    allocated on {allocated['node'] or 'network-attached pools'}: {', '.join(allocated['devices'])} (the pod must go there)")
    elif allocated is None:
        condition = claim.get("condition") or {}
        why = f": {condition.get('reason')}: {condition.get('message')}" if condition else ""
        lines.append(f"    not allocated yet{why}")
    explained = claim.get("explain")
    if explained is None:
        return lines
    for option in explained.get("options", []):
        lines.append(f"    {option['option']}, driver {option['driver']}")
        by_reason: dict[str, list[str]] = {}
        for ignored in option.get("ignoredPools", []):
            by_reason.setdefault(ignored["reason"], []).append(ignored["pool"])
        for reason, pools in by_reason.items():
            lines.append(f"      ignored pools ({reason}): {', '.join(pools)}")
    if explained.get("result", {}).get("reason") not in (None, "Allocated"):
        first_line = explained["result"]["message"].splitlines()[0]  # the nodes' lines follow below
        lines.append(f"    the claim alone: {explained['result']['reason']}: {first_line}")
    if explained.get("nodes"):
        keys = next((list(n["score"]) for n in explained["nodes"] if n.get("score")), [])
        scored = f" (the allocator's {explained.get('policy', '')} score, lower is better: {', '.join(keys)})" if keys else ""
        lines.append(f"    device sets per node{scored}")
        width = max(len(n["node"]) for n in explained["nodes"])
        for node in explained["nodes"]:
            lines.append(f"      {node['node']:<{width}}  {_device_set(node)}")
    return lines


def _device_set(node: dict) -> str:
    if node["feasible"]:
        score = node.get("score") or {}
        return f"[{' '.join(str(v) for v in score.values())}] {', '.join(node.get('devices', []))}"
    verdicts = [
        f"{entry['entry']}: {option['verdict']}"
        for entry in node.get("entries", []) for option in entry["options"] if option.get("verdict") not in (None, "fits on its own")
    ]  # fmt: skip
    return f"no: {node.get('reason', 'no device set')}" + (f" ({'; '.join(verdicts)})" if verdicts else "")


def _filter(report: dict) -> list[str]:
    rows = report.get("filter") or []
    pre = report.get("preFilter")
    if pre is not None:
        return [f"  every node: PreFilter {pre['plugin']}: {pre['code']}: {'; '.join(pre.get('reasons', []))}"]
    if not rows:
        return ["  no node"]
    width = max(len(row["node"]) for row in rows)
    return [f"  {row['node']:<{width}}  {_verdict(row)}" for row in rows]


def _verdict(row: dict) -> str:
    if row["feasible"]:
        return "fits"
    for verdict in reversed(row["verdicts"]):
        if verdict["code"] != "Success":
            who = verdict.get("plugin") or verdict.get("extender") or "PreFilter"
            kind = "extender " if "extender" in verdict else ""
            return f"{kind}{who}: {'; '.join(verdict.get('reasons', [])) or verdict['code']}"
    return NOT_EVALUATED


def _scores(rows: list[dict]) -> list[str]:
    columns: list[tuple[str, int]] = []
    for row in rows:
        for part in row["scores"]:
            column = (part.get("plugin") or f"extender {part.get('extender')}", part["weight"])
            if column not in columns:
                columns.append(column)
    heads = ["NODE"] + [f"{name} x{weight}" for name, weight in columns] + ["TOTAL"]
    table = [heads]
    for row in rows:
        weighted = {(p.get("plugin") or f"extender {p.get('extender')}", p["weight"]): p for p in row["scores"]}
        cells = [str(weighted[c]["weighted"]) if c in weighted else "-" for c in columns]
        table.append([row["node"]] + cells + [str(row["total"])])
    widths = [max(len(r[i]) for r in table) for i in range(len(heads))]
    return ["  " + "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(r)) for r in table]


def _call(call: dict) -> str:
    text = f"{call['extender']} {call['verb']} {call['url']}: {call['outcome']} in {call['latencyMs']} ms"
    if call.get("error"):
        text += f" ({call['error']})"
    return text + (" - ignored" if call.get("ignored") else "")


def _result(report: dict) -> list[str]:
    outcome, node = report.get("outcome", ""), report.get("node", "")
    if outcome == "Schedulable":
        lines = [f"  {report['pod']['namespace']}/{report['pod']['name']} would be assigned to {node}"]
        lines += [f"    {c['entry']}: {', '.join(c['devices'])}" for c in report.get("claims", []) if c.get("devices")]
        return lines
    lines = [f"  {outcome or 'Pending'}" + (f" on {node}" if node else "") + (f": {report['message']}" if report.get("message") else "")]
    if report.get("nominatedNode"):
        victims = report.get("victims")
        evicting = f" once {', '.join(victims)} are evicted" if victims else ""
        lines.append(f"  preemption: nominated node {report['nominatedNode']}{evicting}")
    return lines
