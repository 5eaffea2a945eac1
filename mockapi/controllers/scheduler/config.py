"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``): profiles and extenders.

:func:`load` reads a YAML file, :func:`parse` a dict, :func:`default` is what no file gives (one
profile, ``default-scheduler``, kube's default plugins). A profile's plugins resolve as kube's
``mergePlugins`` does: the default ``multiPoint`` list (with the profile's own ``multiPoint``
enabled/disabled applied) gives every extension point the plugins that implement it; then the
point's own ``disabled`` removes names (``'*'``: all of them) and its ``enabled`` adds names — in
place when already there, else at the end. Score weights: the ``score`` entry's, else
``multiPoint``'s, else the default's, else 1.

Anything kube's validation or strict decoding refuses is a :class:`ConfigError` naming the field
(``profiles[0].plugins.filter.enabled[1].name: Invalid value: "Foo": plugin "Foo" does not
exist``); all problems are reported at once. ``httpTimeout`` defaults to 5 s (kube's
``DefaultExtenderTimeout``) and is a Go duration string, as ``metav1.Duration`` decodes it.

**Extenders per profile.** kube-scheduler gives a configuration's ``extenders`` to every profile
of that configuration; a cluster that wants ``my-scheduler`` with extenders next to a plain
``default-scheduler`` runs two schedulers, each with its own file. mockapi runs them in one
process: a file may hold several ``KubeSchedulerConfiguration`` documents (``---``), each what one
kube-scheduler would read; each profile gets its own document's extenders
(:attr:`Profile.extenders`), and schedulerNames must differ across documents. As kube does, an
extender's ``managedResources`` with ``ignoredByScheduler`` are added to NodeResourcesFit's
``ignoredResources`` in that document's profiles.
"""

from __future__ import annotations

import base64
import re
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mockapi.controllers.scheduler import extenders as extenders_, plugin as plugin_, plugins as plugins_

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_EXTENDER_TIMEOUT = 5.0
EXTENSION_POINTS = ("multiPoint",) + plugin_.POINTS

TOP_FIELDS = {
    "apiVersion", "kind", "profiles", "extenders", "parallelism", "leaderElection", "clientConnection",
    "healthzBindAddress", "metricsBindAddress", "enableProfiling", "enableContentionProfiling",
    "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "delayCacheUntilActive",
}  # fmt: skip
PROFILE_FIELDS = {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}
TLS_FIELDS = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
EXTENDER_FIELDS = {
    "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb", "weight", "enableHTTPS",
    "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
}  # fmt: skip


class ConfigError(ValueError):
    """The configuration is invalid; the message names each offending field."""


@dataclass
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: dict[str, list[str]] = field(default_factory=dict)  # extension point → plugin names, in order
    weights: dict[str, int] = field(default_factory=dict)  # score plugin → weight
    args: dict[str, dict] = field(default_factory=dict)  # plugin → its pluginConfig args
    extenders: list["Extender"] = field(default_factory=list)  # its document's extenders, in order
    # kube's percentageOfNodesToScore: 0 (unset) is adaptive, 50% less 1% per 125 nodes, at least 5%
    percentage_of_nodes_to_score: int = 0


@dataclass
class ManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass
class Extender:
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 1
    enable_https: bool = False
    tls_config: dict | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT  # seconds
    node_cache_capable: bool = False
    managed_resources: list[ManagedResource] = field(default_factory=list)
    ignorable: bool = False


@dataclass
class Configuration:
    profiles: list[Profile]
    extenders: list[Extender] = field(default_factory=list)
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


# ------------------------------------------------------------------------------ entry points
def default() -> Configuration:
    return Configuration([default_profile()])


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
    problems: list[str] = []
    profile = _profile({"schedulerName": scheduler_name}, "profiles[0]", problems)
    assert not problems, problems
    return profile


def load(path: str | Path | None) -> Configuration:
    """The configuration in ``path`` (None: :func:`default`)."""
    if path is None:
        return default()
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read scheduler configuration {path}: {exc.strerror}") from None
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not YAML: {exc}") from None
    try:
        return parse_all(documents)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def parse_all(documents: list) -> Configuration:
    """Several configurations, one scheduler: their profiles side by side, each with its own
    document's extenders; the backoff settings are the first document's."""
    if len(documents) <= 1:
        return parse(documents[0] if documents else None)
    parsed = []
    for i, data in enumerate(documents):
        try:
            parsed.append(parse(data))
        except ConfigError as exc:
            raise ConfigError(f"document {i + 1}: {exc}") from None
    merged = Configuration([p for c in parsed for p in c.profiles], [e for c in parsed for e in c.extenders], parsed[0].pod_initial_backoff, parsed[0].pod_max_backoff)
    problems: list[str] = []
    _unique_names(merged.profiles, problems)
    if problems:
        raise ConfigError("invalid KubeSchedulerConfiguration: " + "; ".join(problems))
    return merged


def parse(data) -> Configuration:
    if not isinstance(data, dict):
        raise ConfigError("a KubeSchedulerConfiguration must be a mapping")
    problems: list[str] = []
    if data.get("apiVersion") != API_VERSION:
        problems.append(f'apiVersion: Unsupported value: "{data.get("apiVersion")}": supported values: "{API_VERSION}"')
    if data.get("kind") != KIND:
        problems.append(f'kind: Unsupported value: "{data.get("kind")}": supported values: "{KIND}"')
    _unknown(data, TOP_FIELDS, "", problems)
    raw_profiles = data.get("profiles") or [{}]
    profiles = [_profile(p if isinstance(p, dict) else {}, f"profiles[{i}]", problems) for i, p in enumerate(_list(raw_profiles, "profiles", problems))]
    _unique_names(profiles, problems)
    extenders = [_extender(e, f"extenders[{i}]", problems) for i, e in enumerate(_list(data.get("extenders") or [], "extenders", problems))]
    if sum(1 for e in extenders if e.bind_verb) > 1:
        problems.append(f"extenders: Invalid value: found {sum(1 for e in extenders if e.bind_verb)} extenders attempting to bind: only one extender can implement bind")
    initial = _positive_number(data, "podInitialBackoffSeconds", 1, "", problems)
    maximum = _positive_number(data, "podMaxBackoffSeconds", 10, "", problems)
    if maximum < initial:
        problems.append(f"podMaxBackoffSeconds: Invalid value: {maximum}: must be greater than or equal to PodInitialBackoffSeconds")
    overall = _percentage(data, "", problems)
    for profile, raw in zip(profiles, raw_profiles if isinstance(raw_profiles, list) else []):
        own = _percentage(raw, f"profiles[{profiles.index(profile)}].", problems) if isinstance(raw, dict) else 0
        profile.percentage_of_nodes_to_score = own or overall
    if problems:
        raise ConfigError("invalid KubeSchedulerConfiguration: " + "; ".join(problems))
    for profile in profiles:
        _give_extenders(profile, extenders)
    return Configuration(profiles, extenders, float(initial), float(maximum))


def _percentage(data: dict, path: str, problems: list[str]) -> int:
    value = data.get("percentageOfNodesToScore")
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        problems.append(f"{path}percentageOfNodesToScore: Invalid value: {value!r}: not in valid range [0-100]")
        return 0
    return value


def _give_extenders(profile: Profile, extenders: list[Extender]) -> None:
    """The profile's extenders; the resources they manage with ``ignoredByScheduler`` are left to
    them by NodeResourcesFit (kube's ``buildExtenders``)."""
    profile.extenders = list(extenders)
    ignored = [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]
    if ignored:
        args = profile.args.setdefault("NodeResourcesFit", {})
        args["ignoredResources"] = list(args.get("ignoredResources") or []) + ignored


# ------------------------------------------------------------------------------ profiles
def _profile(data: dict, path: str, problems: list[str]) -> Profile:
    _unknown(data, PROFILE_FIELDS, path, problems)
    name = data.get("schedulerName", DEFAULT_SCHEDULER_NAME)
    if not isinstance(name, str) or not name:
        problems.append(f"{path}.schedulerName: Required value")
        name = ""
    sets = data.get("plugins") or {}
    if not isinstance(sets, dict):
        problems.append(f"{path}.plugins: Invalid value: must be a mapping of extension points")
        sets = {}
    _unknown(sets, set(EXTENSION_POINTS), f"{path}.plugins", problems)
    parsed = {point: _plugin_set(sets.get(point) or {}, f"{path}.plugins.{point}", point, problems) for point in EXTENSION_POINTS}
    names, weights = _resolve(parsed)
    args = _plugin_config(data.get("pluginConfig") or [], f"{path}.pluginConfig", problems)
    return Profile(name, names, weights, args)


def _plugin_set(data, path: str, point: str, problems: list[str]) -> dict:
    """``{enabled: [(name, weight)], disabled: [names]}`` of one extension point, checked."""
    if not isinstance(data, dict):
        problems.append(f"{path}: Invalid value: must be a mapping with enabled and disabled")
        return {"enabled": [], "disabled": []}
    _unknown(data, {"enabled", "disabled"}, path, problems)
    enabled = []
    for i, entry in enumerate(data.get("enabled") or []):
        name, where = (entry or {}).get("name") if isinstance(entry, dict) else None, f"{path}.enabled[{i}]"
        if _known(name, f"{where}.name", point, problems, enabling=True):
            weight = entry.get("weight")
            if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int) or weight < 0 or weight > 100):
                problems.append(f"{where}.weight: Invalid value: {weight!r}: must be an integer between 0 and 100")
                weight = None
            enabled.append((name, weight))
    disabled = []
    for i, entry in enumerate(data.get("disabled") or []):
        name = (entry or {}).get("name") if isinstance(entry, dict) else None
        if name == "*" or _known(name, f"{path}.disabled[{i}].name", point, problems, enabling=False):
            disabled.append(name)
    return {"enabled": enabled, "disabled": disabled}


def _known(name, path: str, point: str, problems: list[str], *, enabling: bool) -> bool:
    if not isinstance(name, str) or not name:
        problems.append(f"{path}: Required value")
        return False
    cls = plugins_.REGISTRY.get(name)
    if cls is None:
        if name in plugins_.KUBE_ONLY and not enabling:
            return False  # disabling a plugin mockapi does not have: nothing to do
        why = "mockapi does not implement this in-tree plugin" if name in plugins_.KUBE_ONLY else f'plugin "{name}" does not exist'
        problems.append(f'{path}: Invalid value: "{name}": {why}')
        return False
    if point != "multiPoint" and enabling and not cls.implements(point):
        problems.append(f'{path}: Invalid value: "{name}": plugin "{name}" does not extend {point} plugin')
        return False
    return True


def _resolve(sets: dict[str, dict]) -> tuple[dict[str, list[str]], dict[str, int]]:
    """kube's ``mergePlugins`` over the default multiPoint list (see the module docstring)."""
    multi = [] if "*" in sets["multiPoint"]["disabled"] else [(n, w) for n, w in plugins_.DEFAULT_MULTIPOINT if n not in sets["multiPoint"]["disabled"]]
    multi = _merge(multi, sets["multiPoint"]["enabled"])
    weights = {name: weight for name, weight in multi if weight}
    resolved = {}
    for point in plugin_.POINTS:
        user = sets[point]
        base = [] if "*" in user["disabled"] else [(n, w) for n, w in multi if plugins_.REGISTRY[n].implements(point) and n not in user["disabled"]]
        merged = _merge(base, user["enabled"])
        resolved[point] = [name for name, _ in merged]
        if point == "score":
            weights.update({name: weight for name, weight in user["enabled"] if weight})
            weights = {name: weights.get(name) or 1 for name in resolved["score"]}
    return resolved, weights


def _merge(base: list[tuple[str, int | None]], enabled: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    merged = list(base)
    for name, weight in enabled:
        at = next((i for i, (n, _) in enumerate(merged) if n == name), None)
        if at is None:
            merged.append((name, weight))
        else:
            merged[at] = (name, weight if weight is not None else merged[at][1])
    return merged


def _plugin_config(entries, path: str, problems: list[str]) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for i, entry in enumerate(_list(entries, path, problems)):
        name = entry.get("name") if isinstance(entry, dict) else None
        where = f"{path}[{i}]"
        if not isinstance(name, str) or not name:
            problems.append(f"{where}.name: Required value")
            continue
        if name in found:
            problems.append(f'{where}.name: Duplicate value: "{name}"')
            continue
        cls = plugins_.REGISTRY.get(name)
        if cls is None:
            if name not in plugins_.KUBE_ONLY:
                problems.append(f'{where}.name: Invalid value: "{name}": plugin "{name}" does not exist')
            continue
        args = {k: v for k, v in (entry.get("args") or {}).items() if k not in ("apiVersion", "kind")}
        problems.extend(f"{where}.args.{field_}: {message}" for field_, message in cls.validate_args(args))
        found[name] = args
    return found


def _unique_names(profiles: list[Profile], problems: list[str]) -> None:
    seen = set()
    for i, profile in enumerate(profiles):
        if profile.scheduler_name and profile.scheduler_name in seen:
            problems.append(f'profiles[{i}].schedulerName: Duplicate value: "{profile.scheduler_name}"')
        seen.add(profile.scheduler_name)


# ------------------------------------------------------------------------------ extenders
def _extender(data, path: str, problems: list[str]) -> Extender:
    if not isinstance(data, dict):
        problems.append(f"{path}: Invalid value: must be a mapping")
        return Extender("")
    _unknown(data, EXTENDER_FIELDS, path, problems)
    if not data.get("urlPrefix"):
        problems.append(f"{path}.urlPrefix: Required value")
    weight = data.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
        problems.append(f"{path}.weight: Invalid value: {weight!r}: must have a positive weight applied to it")
        weight = 1
    timeout = DEFAULT_EXTENDER_TIMEOUT
    if "httpTimeout" in data:
        timeout = parse_duration(data["httpTimeout"]) if isinstance(data["httpTimeout"], str) else None  # metav1.Duration: a string
        if timeout is None or timeout <= 0:
            problems.append(f'{path}.httpTimeout: Invalid value: "{data["httpTimeout"]}": must be a positive duration such as "5s"')
            timeout = DEFAULT_EXTENDER_TIMEOUT
    managed = []
    for i, resource in enumerate(data.get("managedResources") or []):
        name = resource.get("name") if isinstance(resource, dict) else None
        if not name or "/" not in name:
            problems.append(f'{path}.managedResources[{i}].name: Invalid value: "{name}": must be an extended resource name')
            continue
        managed.append(ManagedResource(name, bool(resource.get("ignoredByScheduler", False))))
    tls = _tls_config(data.get("tlsConfig"), f"{path}.tlsConfig", problems)
    extender = Extender(
        url_prefix=data.get("urlPrefix") or "", filter_verb=data.get("filterVerb") or "", preempt_verb=data.get("preemptVerb") or "",
        prioritize_verb=data.get("prioritizeVerb") or "", bind_verb=data.get("bindVerb") or "", weight=weight,
        enable_https=bool(data.get("enableHTTPS", False)), tls_config=tls, http_timeout=timeout,
        node_cache_capable=bool(data.get("nodeCacheCapable", False)), managed_resources=managed, ignorable=bool(data.get("ignorable", False)),
    )  # fmt: skip
    if tls and not any(p.startswith(f"{path}.tlsConfig") for p in problems):
        try:
            extenders_.tls_context(extender)  # kube's NewHTTPExtender fails at start-up on unusable files
        except (OSError, ssl.SSLError, ValueError) as exc:
            problems.append(f"{path}.tlsConfig: Invalid value: {getattr(exc, 'strerror', None) or exc}")
    return extender


def _tls_config(data, path: str, problems: list[str]) -> dict | None:
    """``tlsConfig`` checked: known fields; ``certData``/``keyData``/``caData`` base64 (Go's ``[]byte``)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: Invalid value: must be a mapping")
        return None
    _unknown(data, TLS_FIELDS, path, problems)
    for name in ("certData", "keyData", "caData"):
        if data.get(name):
            try:
                base64.b64decode(data[name], validate=True)
            except (ValueError, TypeError):
                problems.append(f"{path}.{name}: Invalid value: must be base64-encoded PEM")
    return dict(data)


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value) -> float | None:
    """Go's ``time.ParseDuration`` (``30s``, ``1m30s``, ``500ms``) in seconds; a bare number is seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str) or not value:
        return None
    if value == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _DURATION.finditer(value):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return total if pos == len(value) else None


# ------------------------------------------------------------------------------ helpers
def _unknown(data: dict, allowed: set[str], path: str, problems: list[str]) -> None:
    for name in data:
        if name not in allowed:
            problems.append(f'{path + "." if path else ""}{name}: unknown field "{name}"')


def _list(value, path: str, problems: list[str]) -> list:
    if isinstance(value, list):
        return value
    problems.append(f"{path}: Invalid value: must be a list")
    return []


def _positive_number(data: dict, name: str, default: float, path: str, problems: list[str]) -> float:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        problems.append(f"{path}{name}: Invalid value: {value!r}: must be greater than 0")
        return default
    return value
