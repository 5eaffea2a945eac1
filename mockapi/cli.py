"""The ``mockapi`` command line: ``serve`` runs the server, ``allocator`` and ``explain`` work against
any API server, ``schedule`` and ``scheduling`` say where a pod would go and went, ``gen`` prints
capacity, ``crds`` writes or checks schemas/.

Every failure a person can cause (a bad flag, a missing kubeconfig, an unreachable server, a port in
use, a bad manifest, an error Status from the server) is one line on stderr, ``mockapi <command>:
<what went wrong>``, and a non-zero exit: 2 for a bad invocation, 1 otherwise.
"""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import os
import socket
import sys
import time
import urllib.parse
from pathlib import Path

from mockapi import logs
from mockapi.settings import DEFAULT_PORT, Settings

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
ALLOCATION_MODES = ("immediate", "delay", "manual")


class CommandError(Exception):
    """A failure the command reports as one line on stderr, exiting with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (the usage itself is one ``--help`` away)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        if args.command == "serve":
            return 0  # Ctrl-C is how a server is stopped: it shut down cleanly
        print(f"mockapi {args.command}: interrupted", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(130)  # as a shell reports SIGINT, without waiting for a request thread blocked on the server
    except Exception as exc:  # noqa: BLE001 - what a person can act on is one line; a bug keeps its traceback
        message = _failure(exc)
        if message is None:
            raise
        print(f"mockapi {args.command}: {message}", file=sys.stderr)
        return exc.code if isinstance(exc, CommandError) else 1


def _failure(exc: Exception) -> str | None:
    """One line saying what went wrong, or None for an unexpected exception (a bug)."""
    from mockapi import errors
    from mockapi.client import ConnectError, NoKubeconfig

    if isinstance(exc, NoKubeconfig):
        message = f"{exc} (give --kubeconfig FILE, set KUBECONFIG, or use --server URL)"
    elif isinstance(exc, (CommandError, ConnectError)):
        message = str(exc)
    elif isinstance(exc, errors.StatusError):
        message = f"error from server ({exc.reason}): {exc.message}"
    elif isinstance(exc, OSError) and exc.strerror:
        message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        return None
    return " ".join(message.split())  # one line, whatever the server or a YAML parser said


def _run(args) -> int:
    if args.command == "serve":
        return serve_forever(_settings(args))
    if args.command in ("allocator", "explain", "gen"):
        return _run_allocator_command(args)
    if args.command in ("schedule", "scheduling"):
        return _run_schedule_command(args)
    return write_crds(args.out, check=args.check)


def _settings(args) -> Settings:
    overload = {name: getattr(args, name) for name in _OVERLOAD_SETTINGS}
    if overload["max_connections"] is None:
        overload["max_connections"] = _default_max_connections()
    return Settings(
        host=args.host, port=args.port, data_dir=args.data_dir, load=args.load if args.load is not None else _env_paths("LOAD"), log_level=args.log_level, history_size=args.watch_history, max_body=args.max_body,
        store_compression=_env_bool("STORE_COMPRESSION", args.store_compression),
        log_format=args.log_format, allocation_mode=args.allocation_mode, allocation_delay=args.allocation_delay, allocation_jitter=args.allocation_jitter,
        allocator=not args.no_allocator, allocation_policy=args.allocation_policy,
        allocation_budget_steps=args.allocation_budget_steps, allocation_budget_seconds=args.allocation_budget_seconds,
        scheduler=not (args.no_allocator or args.no_scheduler), scheduler_config=_scheduler_config(args.scheduler_config),
        kubelet=not args.no_kubelet, garbage_collector=not args.no_gc, kubelet_heartbeat=args.kubelet_heartbeat,
        kubelet_start_delay=args.kubelet_start_delay, kubelet_max_grace=args.kubelet_max_grace, kubelet_capacity=dict(args.kubelet_capacity or []),
        service_cluster_ip_range=args.service_cluster_ip_range, service_node_port_range=args.service_node_port_range,
        authentication=args.authentication, token_auth_file=args.token_auth_file, client_ca_file=args.client_ca_file, anonymous_auth=args.anonymous_auth,
        authorization_mode=args.authorization_mode, tls_cert_file=args.tls_cert_file, tls_private_key_file=args.tls_private_key_file,
        generate_certs=args.generate_certs, audit_log_path=args.audit_log_path, audit_policy_file=args.audit_policy_file,
        **overload,
    )


_OVERLOAD_SETTINGS = (
    "max_requests_inflight", "max_mutating_requests_inflight", "max_watchers", "max_watchers_per_client", "request_timeout",
    "max_connections", "read_header_timeout", "idle_timeout", "max_header_bytes", "shutdown_grace_period", "shutdown_delay",
)  # fmt: skip


def _scheduler_config(path: Path | None) -> Path | None:
    """The --scheduler-config file, checked before the server starts (a bad file is a usage error)."""
    if path is None:
        return None
    from mockapi.controllers.scheduler import config as config_

    try:
        config_.load(path)
    except config_.ConfigError as exc:
        raise CommandError(f"{path}: {exc}", code=2) from None
    return path


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mockapi", description="A small, real Kubernetes API server for device management.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the API server")
    # Every serve option also reads an environment variable (MOCKAPI_PORT for --port, ...): a
    # container is configured without arguments. An option given on the command line wins.
    serve.add_argument("--host", default=_env("HOST", "127.0.0.1"), help="address to listen on (default 127.0.0.1; 0.0.0.0 in a container)")
    serve.add_argument("--port", type=_port, default=_env("PORT", DEFAULT_PORT), help=f"port (default {DEFAULT_PORT}; 0 picks a free port and prints it)")
    serve.add_argument("--load", action="append", type=Path, default=None, metavar="PATH", help="file or directory of manifests to apply at start-up (repeatable; MOCKAPI_LOAD: paths separated by ':')")
    serve.add_argument("--data-dir", type=Path, default=_env("DATA_DIR", None), metavar="DIR", help="keep every object in DIR (SQLite) and restore them at start (MOCKAPI_DATA_DIR; default: in memory only)")
    serve.add_argument("--log-level", type=str.lower, choices=LOG_LEVELS, default=_env("LOG_LEVEL", "info"))
    serve.add_argument("--log-format", type=str.lower, choices=logs.FORMATS, default=_env("LOG_FORMAT", "text"), help="text (default) or json: one JSON object per line")
    serve.add_argument("--watch-history", type=_at_least(1), default=_env("WATCH_HISTORY", Settings.history_size), metavar="N", help="watch events kept for resumes (default %(default)s)")
    serve.add_argument("--store-compression", action=argparse.BooleanOptionalAction, default=_env("STORE_COMPRESSION", True), help="keep stored objects compressed in memory (MOCKAPI_STORE_COMPRESSION; default on: a 4.6 KB pod takes ~0.4 KB)")
    serve.add_argument("--max-body", type=_at_least(1), default=_env("MAX_BODY", Settings.max_body), metavar="BYTES", help="largest request body accepted (default %(default)s)")
    serve.add_argument("--allocation-mode", type=str.lower, choices=ALLOCATION_MODES, default=_env("ALLOCATION_MODE", "immediate"), help="when the allocator may act on a claim (default immediate)")
    serve.add_argument("--allocation-delay", type=_seconds, default=_env("ALLOCATION_DELAY", Settings.allocation_delay), metavar="SECONDS", help="wait before each allocation attempt in delay mode (default %(default)s)")
    serve.add_argument("--allocation-jitter", type=_seconds, default=_env("ALLOCATION_JITTER", Settings.allocation_jitter), metavar="SECONDS", help="± random seconds added to that delay (default %(default)s)")
    serve.add_argument("--no-allocator", action="store_true", default=bool(_env("NO_ALLOCATOR", "")), help="do not run the allocator (nor the scheduler) in this process (run `mockapi allocator` elsewhere)")
    serve.add_argument("--no-scheduler", action="store_true", default=bool(_env("NO_SCHEDULER", "")), help="do not schedule pods (nor make their claims) in this process")
    serve.add_argument("--no-kubelet", action="store_true", default=bool(_env("NO_KUBELET", "")), help="do not simulate kubelets: bound pods stay Pending, Nodes keep the status they are given")
    serve.add_argument("--kubelet-heartbeat", type=_positive_seconds, default=_env("KUBELET_HEARTBEAT", Settings.kubelet_heartbeat), metavar="SECONDS", help="how often a simulated kubelet renews its Node's Lease in kube-node-lease (default %(default)s)")
    serve.add_argument("--kubelet-start-delay", type=_seconds, default=_env("KUBELET_START_DELAY", Settings.kubelet_start_delay), metavar="SECONDS", help="from a pod's being bound (and its claims reserved) to Running (default %(default)s)")
    serve.add_argument("--kubelet-max-grace", type=_seconds, default=_env("KUBELET_MAX_GRACE", Settings.kubelet_max_grace), metavar="SECONDS", help="a deleted running pod ends after min(its grace period, this) (default %(default)s: at once)")
    serve.add_argument("--kubelet-capacity", type=_resource, action="append", metavar="NAME=QUANTITY", help="a bare Node's capacity for one resource, e.g. cpu=64 (repeatable; defaults cpu=32, memory=256Gi, pods=110, ephemeral-storage=1Ti)")
    serve.add_argument("--service-cluster-ip-range", type=_cidr, default=_env("SERVICE_CLUSTER_IP_RANGE", Settings.service_cluster_ip_range), metavar="CIDR", help="Services' cluster IPs come from this range (default %(default)s)")
    serve.add_argument("--service-node-port-range", type=_port_range, default=_env("SERVICE_NODE_PORT_RANGE", Settings.service_node_port_range), metavar="LOW-HIGH", help="Services' node ports come from this range (default %(default)s)")
    serve.add_argument("--no-gc", action="store_true", default=bool(_env("NO_GC", "")), help="do not run the garbage collector (ownerReferences are not followed)")
    _auth_options(serve)
    _overload_options(serve)
    _allocator_options(serve)
    _add_allocator_commands(commands)
    _add_schedule_commands(commands)

    crds = commands.add_parser("crds", help="write the CRDs of our kinds (schemas/) from the models, or check them")
    crds.add_argument("--out", type=Path, default=Path("schemas"), help="directory (default schemas/)")
    crds.add_argument("--check", action="store_true", help="exit 1 if the files differ from the models")
    return parser


def _auth_options(serve) -> None:
    """Authentication, authorization, TLS and the audit log (docs/auth.md), with kube-apiserver's flag names."""
    serve.add_argument("--authentication", action="store_true", default=bool(_env("AUTHENTICATION", "")), help="requests need credentials (a token, a client certificate); on with --token-auth-file, --client-ca-file or --authorization-mode=RBAC")
    serve.add_argument("--token-auth-file", type=Path, default=_env("TOKEN_AUTH_FILE", None), metavar="FILE", help='bearer tokens, kube\'s CSV format: token,user,uid,"group1,group2"')
    serve.add_argument("--client-ca-file", type=Path, default=_env("CLIENT_CA_FILE", None), metavar="FILE", help="client certificates this CA signed authenticate (CN: user, O: groups)")
    serve.add_argument("--anonymous-auth", type=_bool, nargs="?", const=True, default=_env("ANONYMOUS_AUTH", False), metavar="BOOL", help="requests without credentials run as system:anonymous (default false: 401)")
    serve.add_argument("--authorization-mode", choices=("AlwaysAllow", "RBAC", "Node,RBAC", "RBAC,Node"), default=_env("AUTHORIZATION_MODE", "AlwaysAllow"), help="AlwaysAllow (default), RBAC (Roles and bindings decide; system:masters may do anything) or Node,RBAC (kube's Node authorizer for system:node:<name> first)")
    serve.add_argument("--tls-cert-file", type=Path, default=_env("TLS_CERT_FILE", None), metavar="FILE", help="serve HTTPS with this certificate (PEM)")
    serve.add_argument("--tls-private-key-file", type=Path, default=_env("TLS_PRIVATE_KEY_FILE", None), metavar="FILE", help="the key of --tls-cert-file")
    serve.add_argument("--generate-certs", type=Path, default=_env("GENERATE_CERTS", None), metavar="DIR", help="generate a CA, a serving certificate and an admin client certificate in DIR, serve HTTPS, and write DIR/kubeconfig")
    serve.add_argument("--audit-log-path", default=_env("AUDIT_LOG_PATH", None), metavar="FILE", help="write audit events here, one JSON Event a line ('-': stdout)")
    serve.add_argument("--audit-policy-file", type=Path, default=_env("AUDIT_POLICY_FILE", None), metavar="FILE", help="an audit.k8s.io/v1 Policy (default: Metadata for every request)")


def _env_bool(name: str, value) -> bool:
    """A boolean flag's value: the flag's own (a bool), or ``MOCKAPI_<name>``'s text (its default)."""
    try:
        return _bool(value)
    except argparse.ArgumentTypeError as exc:
        raise CommandError(f"MOCKAPI_{name}: {exc}", code=2) from None


def _bool(text) -> bool:
    if isinstance(text, bool):
        return text
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")
def _overload_options(serve) -> None:
    """Overload protection and graceful shutdown (docs/overload-and-shutdown.md): kube-apiserver's
    flag names and defaults where it has them; 0 turns a bound off."""
    count, seconds = _at_least(0), _seconds
    for flag, env, kind, help_ in (
        ("--max-requests-inflight", "MAX_REQUESTS_INFLIGHT", count, "read-only requests running at once; more get 429 (watches not counted)"),
        ("--max-mutating-requests-inflight", "MAX_MUTATING_REQUESTS_INFLIGHT", count, "writes running at once; more get 429"),
        ("--max-watchers", "MAX_WATCHERS", count, "open watches in total; more get 429"),
        ("--max-watchers-per-client", "MAX_WATCHERS_PER_CLIENT", count, "open watches per client address; more get 429"),
        ("--request-timeout", "REQUEST_TIMEOUT", seconds, "seconds before a request that is not a watch ends with 504 (?timeout= may ask for less)"),
        ("--max-connections", "MAX_CONNECTIONS", count, "open connections; a new one closes the oldest idle one (default 10000, less under a lower file descriptor limit)"),
        ("--read-header-timeout", "READ_HEADER_TIMEOUT", seconds, "seconds a connection has to send its request line and headers"),
        ("--idle-timeout", "IDLE_TIMEOUT", seconds, "seconds an idle keep-alive connection stays open"),
        ("--max-header-bytes", "MAX_HEADER_BYTES", _at_least(1), "request line and headers; larger requests get 431"),
        ("--shutdown-grace-period", "SHUTDOWN_GRACE_PERIOD", seconds, "seconds in-flight requests get to finish after SIGTERM/SIGINT"),
        ("--shutdown-delay", "SHUTDOWN_DELAY", seconds, "seconds /readyz answers 503 after SIGTERM before the listener closes"),
    ):
        name = flag[2:].replace("-", "_")
        default = None if name == "max_connections" else getattr(Settings, name)  # None: _default_max_connections()
        shown = "" if default is None else " (default %(default)s)"
        serve.add_argument(flag, type=kind, default=_env(env, default), metavar="SECONDS" if kind is seconds else "N", help=help_ + shown)


def _default_max_connections() -> int:
    """10,000, or less when the file descriptor limit is lower: the soft limit is raised to the hard
    one first (as Go does at start-up), and 256 descriptors stay for everything else."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard and hard != resource.RLIM_INFINITY:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    except (ImportError, ValueError, OSError):  # pragma: no cover - not Unix, or not allowed
        return Settings.max_connections
    if soft == resource.RLIM_INFINITY:
        return Settings.max_connections
    return max(64, min(Settings.max_connections, soft - 256))


# ------------------------------------------------------------------ values the options take
def _resource(text: str) -> tuple[str, str]:
    from mockapi import quantity

    name, _, amount = text.partition("=")
    if not name or quantity.parse_or_none(amount) is None:
        raise argparse.ArgumentTypeError(f"expected NAME=QUANTITY (e.g. cpu=64 or memory=512Gi), not {text!r}")
    return name, amount


def _cidr(text: str) -> str:
    from mockapi.registry.cluster import parse_service_ranges

    try:
        parse_service_ranges(text, "30000-32767")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _port_range(text: str) -> str:
    from mockapi.registry.cluster import parse_service_ranges

    try:
        parse_service_ranges("10.96.0.0/12", text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _at_least(minimum: int):
    def convert(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    convert.__name__ = "int"  # argparse names the type in "invalid int value: 'x'"
    return convert


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {port}")
    return port


def _seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text}")
    return value


def _positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value == 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _server_url(text: str) -> str:
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a server URL such as http://127.0.0.1:6443")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return text


for _convert, _name in ((_port, "port"), (_seconds, "seconds"), (_positive_seconds, "seconds"), (_server_url, "URL")):
    _convert.__name__ = _name  # argparse says "invalid port value: 'x'"


# ------------------------------------------------------------------ the allocator's commands
def _allocator_options(parser) -> None:
    parser.add_argument("--allocation-policy", choices=("binpack", "first-fit", "spread"), default=_env("ALLOCATION_POLICY", Settings.allocation_policy), help="which feasible node wins (default binpack)")
    parser.add_argument("--allocation-budget-steps", type=_at_least(1), default=Settings.allocation_budget_steps, metavar="N", help="search steps per allocation cycle (default %(default)s)")
    parser.add_argument("--allocation-budget-seconds", type=_positive_seconds, default=Settings.allocation_budget_seconds, metavar="SECONDS", help="seconds of work per allocation cycle: CPU time of the planning thread and the isolated evaluator, not wall time (default %(default)s)")
    parser.add_argument("--scheduler-config", type=Path, default=_env("SCHEDULER_CONFIG", None), metavar="FILE", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): profiles, plugins, extenders (default: kube's default profile)")


def _add_allocator_commands(commands) -> None:
    allocator = commands.add_parser("allocator", help="run the allocator and the pod scheduler against any API server (one started with --no-allocator, or a cluster with schemas/ applied)")
    allocator.add_argument("--no-scheduler", action="store_true", help="allocate claims only: do not schedule pods nor make their claims")
    explain = commands.add_parser("explain", help="print the allocator's full diagnosis of one claim")
    for parser in (allocator, explain):
        parser.add_argument("--server", type=_server_url, default=None, metavar="URL", help="the API server's URL; alone, no kubeconfig is read")
        parser.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
        parser.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")
        parser.add_argument("--log-level", choices=LOG_LEVELS, default="info")
        _allocator_options(parser)
    explain.add_argument("claim", metavar="CLAIM", help="the claim's name")
    explain.add_argument("-n", "--namespace", default="default")
    explain.add_argument("--kind", choices=("DeviceClaim", "DevicePrivilegedClaim"), default="DeviceClaim")
    explain.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    gen = commands.add_parser("gen", help="print DevicePools (YAML) in one of the prototype's capacity shapes")
    gen.add_argument("shape", metavar="SHAPE", help="foozer-1000-{tiny,small,medium,large}, foozer-4000-..., barzer-8000 or mixed")
    gen.add_argument("--nodes", type=_at_least(0), default=1, metavar="N", help="how many nodes (default 1)")
    gen.add_argument("--numa-nodes", type=_at_least(1), default=None, metavar="K", help="override the shape's NUMA nodes (foozer) or GPUs (barzer-8000)")
    gen.add_argument("--devices-per-numa", type=_at_least(1), default=None, metavar="M", help="override the shape's devices per NUMA node (foozer)")
    gen.add_argument("--with-nodes", action="store_true", help="print the Node objects too, before the pools")


def _run_allocator_command(args) -> int:
    if args.command == "gen":
        return _generate(args)
    from mockapi.client import KubeClient

    logs.configure(level=args.log_level, fmt="text")
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)  # its retries: the failure is said once, below
    client = KubeClient.connect(server=args.server, kubeconfig=args.kubeconfig, context=args.context)
    from mockapi.controllers.allocator import Limits, standalone

    limits = Limits(args.allocation_budget_steps, args.allocation_budget_seconds)
    if args.command == "allocator":
        scheduling = None if args.no_scheduler else _scheduler_config(args.scheduler_config) or True
        return standalone.run(client, policy=args.allocation_policy, limits=limits, scheduling=scheduling)
    from mockapi.controllers.allocator import ClaimKey

    key = ClaimKey(args.namespace, args.claim, args.kind)
    return standalone.explain(client, key=key, policy=args.allocation_policy, limits=limits, output=args.output)


def _add_schedule_commands(commands) -> None:
    schedule = commands.add_parser("schedule", help="where a pod would go and why (per node, per claim), writing nothing")
    schedule.add_argument("-f", "--filename", required=True, metavar="FILE", help="the Pod manifest ('-': stdin)")
    schedule.add_argument("--from", dest="sources", action="append", type=Path, default=[], metavar="PATH", help="read the cluster from these manifests (files or directories, repeatable), not from a server")
    scheduling = commands.add_parser("scheduling", help="print a running server's record of a pod's last scheduling attempt")
    scheduling.add_argument("pod", metavar="NAMESPACE/NAME", help="the pod (NAME alone: in -n's namespace)")
    scheduling.add_argument("-n", "--namespace", default="default")
    for parser in (schedule, scheduling):
        parser.add_argument("--server", type=_server_url, default=None, metavar="URL", help="the API server's URL; alone, no kubeconfig is read")
        parser.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
        parser.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")
        parser.add_argument("-o", "--output", choices=("yaml", "json"), default=None, help="the report as data (default: for people)")
    _allocator_options(schedule)


def _run_schedule_command(args) -> int:
    from mockapi import schedule_cli

    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)  # its retries: the failure is said once
    try:
        return schedule_cli.run(args)
    except schedule_cli.Failure as exc:
        raise CommandError(str(exc), code=exc.code) from None


def _generate(args) -> int:
    import yaml

    from mockapi import capacity

    layout = None
    if args.numa_nodes is not None or args.devices_per_numa is not None:
        default = capacity.SIZES.get(args.shape.rpartition("-")[2], (2, 4))
        layout = capacity.Layout(args.numa_nodes or default[0], args.devices_per_numa or default[1])
    try:
        docs = capacity.generate(args.shape, nodes=args.nodes, layout=layout, with_nodes=args.with_nodes)
    except ValueError as exc:
        raise CommandError(str(exc), code=2) from exc
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False, width=120))
    return 0


def _env(name: str, default):
    """``MOCKAPI_<name>`` if set and not empty, else the default (argparse converts strings)."""
    return os.environ.get(f"MOCKAPI_{name}") or default


def _env_paths(name: str) -> list[Path]:
    return [Path(p) for p in (os.environ.get(f"MOCKAPI_{name}") or "").split(os.pathsep) if p]


def write_crds(directory: Path, *, check: bool) -> int:
    from mockapi.models import crdgen

    if check:
        if not directory.is_dir():
            raise CommandError(f"{directory}: no such directory")
        drifted = crdgen.drift(directory)
        for name in drifted:
            print(f"{directory / name}: out of date (run `mockapi crds`)", file=sys.stderr)
        if crdgen.served_drift():
            print(f"{crdgen.SERVED}: out of date (run `mockapi crds` in the source checkout)", file=sys.stderr)
            drifted.append(crdgen.SERVED.name)
        return 1 if drifted else 0
    for path in crdgen.write(directory):
        print(path)
    if (Path(crdgen.__file__).parents[2] / "pyproject.toml").is_file():  # a source checkout: what start-up reads too
        print(crdgen.write_served())
    return 0


def serve_forever(settings: Settings) -> int:
    # Start-up only allocates what stays (modules, types, schemas, loaded objects): collecting
    # on the way costs ~30 ms (about 180 collections) and finds almost nothing.
    gc.disable()
    try:
        return _serve(settings)
    finally:
        gc.enable()  # _tune_gc did already, unless start-up failed


def _serve(settings: Settings) -> int:
    from mockapi import uvicorn_lean

    uvicorn_lean.install()  # uvicorn's Server and Config without its command line (click, supervisors)
    from mockapi import app as app_
    from mockapi.http import lifecycle
    from mockapi.loader import LoadError
    refused: tuple[type[Exception], ...] = (LoadError,)
    if settings.data_dir is not None:
        from mockapi.persistence import JournalError

        refused = (LoadError, JournalError)

    logs.configure(level=settings.log_level, fmt=settings.log_format)
    started = time.monotonic()
    sock = socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it, Nagle + delayed ACK add ~40 ms to every
    # response sent as headers and body in two writes (uvicorn does not set it on a passed socket).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        sock.close()
        raise CommandError(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}", code=2) from exc
    settings.port = sock.getsockname()[1]
    try:
        tls_options = _tls(settings)
        server = app_.build(settings)
    except (*refused, ValueError) as exc:
        sock.close()
        raise CommandError(str(exc)) from exc
    except OSError:
        sock.close()
        raise
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    line = functools.partial(
        logs.banner, url=f"{'https' if tls_options else 'http'}://{host}:{settings.port}", objects=server.loaded.total, load_seconds=time.monotonic() - started, fmt=settings.log_format
    )
    _tune_gc()
    # Server.run, not asyncio.run(serve()): it starts uvloop when installed (~1.2x the throughput).
    # SIGTERM/SIGINT drain it gracefully and it returns (mockapi.http.lifecycle): exit 0.
    lifecycle.uvicorn_server(
        server.app, settings, admission=server.admission, streams=server.streams, tls_options=tls_options,
        on_ready=lambda: print(line(ready_seconds=logs.process_age()), flush=True),
    ).run(sockets=[sock])
    return 0


def _tls(settings: Settings) -> dict:
    """uvicorn's ssl options; with --generate-certs, the certificates and DIR/kubeconfig written first."""
    from mockapi.auth import tls

    return tls.prepare(settings)


def _tune_gc() -> None:
    """What start-up loaded stays: freeze it out of collections (without a collection first: with
    the collector off during start-up that costs ~25 ms before ready and would free only ~1,000
    objects of start-up garbage, which stay), and collect the young generation less often (every
    write allocates many short-lived dicts; PERF.md §10.6)."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    gc.enable()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
