"""Server settings: one value, built by the CLI (or a test) and passed to the composition root."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mockapi.http.bodies import DEFAULT_MAX_BODY
from mockapi.store.memory import DEFAULT_HISTORY, DEFAULT_WATCHER_BUFFER

DEFAULT_PORT = 55441


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    load: list[Path] = field(default_factory=list)
    # Where every write is made durable (mockapi.persistence); None: in memory only, the default.
    data_dir: Path | None = None
    log_level: str = "info"
    history_size: int = DEFAULT_HISTORY
    watcher_buffer: int = DEFAULT_WATCHER_BUFFER
    # Keep stored objects LZ4-compressed against a per-resource dictionary (docs/memory.md): ~1/20 of the memory.
    store_compression: bool = True
    max_body: int = DEFAULT_MAX_BODY
    bookmark_interval: float = 60.0
    min_request_timeout: float = 1800.0
    log_format: str = "text"  # "text" or "json"
    # Allocator progression (mockapi.controllers.gate): "immediate", "delay" or "manual".
    allocation_mode: str = "immediate"
    allocation_delay: float = 1.0  # seconds before each attempt in "delay" mode
    allocation_jitter: float = 0.0  # ± seconds added at random to that delay
    request_log_size: int = 1000  # recent API requests kept for GET /mockapi/v1/requests
    # The allocator (mockapi.controllers.allocator). `mockapi serve` turns it on unless --no-allocator;
    # a server built from Settings() in code (tests, mockapi.testing) runs without it unless asked.
    allocator: bool = False
    allocation_policy: str = "binpack"  # binpack, first-fit or spread (ALLOCATOR.md rule 12)
    allocation_budget_steps: int = 200_000  # search steps per allocation cycle
    allocation_budget_seconds: float = 0.25  # seconds of work per allocation cycle (not wall time: budget.py)
    # The pod scheduler (mockapi.controllers.scheduler) and the pods' claims controller: they run
    # with the allocator (one process, one ledger of held devices); `mockapi serve` turns them on
    # unless --no-scheduler.
    scheduler: bool = False
    scheduler_config: Path | None = None  # a KubeSchedulerConfiguration file (kube's default profile without)
    # The simulated kubelet (mockapi.controllers.kubelet) and the garbage collector (mockapi.controllers.gc).
    kubelet: bool = False
    kubelet_heartbeat: float = 10.0  # seconds between two renewals of a simulated Node's Lease
    kubelet_start_delay: float = 0.0  # seconds from "may start" to Running
    kubelet_max_grace: float = 0.0  # a deleted pod ends after min(its grace period, this) seconds
    kubelet_capacity: dict[str, str] = field(default_factory=dict)  # overrides of a bare Node's default capacity
    garbage_collector: bool = False
    # Overload protection and shutdown (mockapi.http.overload, .connections, .lifecycle); kube-apiserver's
    # defaults and flag names. 0 turns a bound off.
    # Read-only requests running or queued (watches not counted), and writes. kube's defaults are
    # 400 and 200 for Go on many cores; one event loop runs every admitted request's turn in one
    # pass, so a quarter of that keeps a pass (and a health probe's wait) under ~50 ms in a flood
    # (bench/overload.py, docs/overload-and-shutdown.md).
    max_requests_inflight: int = 100
    max_mutating_requests_inflight: int = 50
    max_watchers: int = 10_000  # open watches, in total
    max_watchers_per_client: int = 5_000  # open watches per remote address (local clients all share one)
    request_timeout: float = 60.0  # seconds; ?timeout= may ask for less
    max_connections: int = 10_000  # open connections; the oldest idle one makes room for a new one
    read_header_timeout: float = 32.0  # seconds to send the request line and headers
    idle_timeout: float = 90.0  # seconds a keep-alive connection may stay idle
    max_header_bytes: int = 1 << 20  # request line and headers; more is a 431
    shutdown_grace_period: float = 5.0  # seconds in-flight requests get to finish after SIGTERM
    shutdown_delay: float = 0.0  # seconds /readyz answers 503 before the listener closes
    # Where Services' cluster IPs and node ports come from (kube-apiserver's flags of the same names).
    service_cluster_ip_range: str = "10.96.0.0/12"
    service_node_port_range: str = "30000-32767"

    # Authentication, authorization, TLS and the audit log (docs/auth.md); all off by default.
    authentication: bool = False  # on: requests need credentials (also on with a token file or a client CA)
    token_auth_file: Path | None = None  # kube's static token file: token,user,uid,"group1,group2"
    client_ca_file: Path | None = None  # client certificates signed by this CA authenticate (CN user, O groups)
    anonymous_auth: bool = False  # requests without credentials run as system:anonymous instead of a 401
    authorization_mode: str = "AlwaysAllow"  # or "RBAC"
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    generate_certs: Path | None = None  # write a CA, a serving certificate and a kubeconfig here, and serve HTTPS
    audit_log_path: str | None = None  # "-": stdout
    audit_policy_file: Path | None = None  # an audit.k8s.io/v1 Policy (without one: Metadata for every request)
    audit_log_size: int = 1000  # recent audit events kept for GET /mockapi/v1/audit

    @property
    def authenticating(self) -> bool:
        return bool(self.authentication or self.token_auth_file or self.client_ca_file or self.authorization_mode != "AlwaysAllow")

    @property
    def auditing(self) -> bool:
        return bool(self.audit_log_path or self.audit_policy_file)
