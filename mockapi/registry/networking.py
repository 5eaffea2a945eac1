"""networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy as kube-apiserver stores them:
kube's defaults, the DefaultIngressClass admission plugin, and the validation clients meet
(``pkg/apis/networking/validation``). No ingress controller runs: an Ingress's
``status.loadBalancer`` stays empty (ADDRESS blank) and no NetworkPolicy is enforced.

- **Ingress**: generation counts spec changes; ``status`` starts as ``{loadBalancer: {}}``. On
  create without ``spec.ingressClassName`` (nor the old ``kubernetes.io/ingress.class``
  annotation), the default IngressClass's name (annotation
  ``ingressclass.kubernetes.io/is-default-class: "true"``; the newest when several) is filled in.
  Validation: ``defaultBackend`` or ``rules``; each HTTP path has a ``pathType`` (``Exact``,
  ``ImplementationSpecific``, ``Prefix``) and an absolute ``path``; a backend is a service (name
  and a port name or number, not both) or a resource, not both; a rule's ``host`` and a TLS
  entry's ``hosts`` are DNS subdomains, or wildcard ones (``*.example.com``), and a rule's host
  is not an IP address; a TLS ``secretName`` is a Secret's name.
- **IngressClass**: ``spec.parameters.scope`` defaults to ``Cluster``; ``spec.controller`` is
  required, at most 250 characters and immutable; parameters name a kind and a name, and a
  namespace exactly when ``scope: Namespace``.
- **NetworkPolicy**: ``policyTypes`` defaults to ``[Ingress]``, plus ``Egress`` when there are
  egress rules; a port's ``protocol`` to ``TCP`` (schema default). Empty ``ingress``/``egress``
  lists and a rule's empty ``from``/``to``/``ports`` are left out, as kube's serialization does
  (Go slices with omitempty): ``ingress: []`` and no ``ingress`` mean the same. Validation: policy types,
  port protocols, ``endPort`` needs a numeric ``port`` no greater than it; selectors as kube's
  ``ValidateLabelSelector``; a peer is a pod and/or namespace selector or an ``ipBlock`` alone;
  an ``ipBlock``'s ``cidr`` and ``except`` entries are CIDRs, each ``except`` a strict subset of
  ``cidr`` (v1.32's ``ValidateIPBlock``).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from mockapi import errors
from mockapi.names import byte_len, dns1123_subdomain_errors, max_len_error, regex_error
from mockapi.registry.cluster import Cluster
from mockapi.registry.policy import label_selector_errors
from mockapi.registry.strategy import Strategy, not_supported

GROUP = "networking.k8s.io"
INGRESS_CLASSES = errors.GroupResource(GROUP, "ingressclasses")
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
CLASS_ANNOTATION = "kubernetes.io/ingress.class"
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
POLICY_TYPES = ("Egress", "Ingress")
PROTOCOLS = ("SCTP", "TCP", "UDP")
SCOPES = ("Cluster", "Namespace")
MAX_CONTROLLER = 250
_WILDCARD_FMT = "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD = re.compile(_WILDCARD_FMT)
_WILDCARD_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of "
    "lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character"
)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


class IngressStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"loadBalancer": {}}

    def admit(self, cluster: Cluster, obj: dict) -> None:
        """The DefaultIngressClass admission plugin."""
        spec = obj.get("spec")
        if not isinstance(spec, dict) or spec.get("ingressClassName") or CLASS_ANNOTATION in (obj["metadata"].get("annotations") or {}):
            return
        default = default_class(cluster)
        if default is not None:
            spec["ingressClassName"] = default["metadata"]["name"]

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = []
        if spec.get("defaultBackend") is not None:
            problems += backend_errors(spec["defaultBackend"], "spec.defaultBackend")
        elif not spec.get("rules"):
            problems.append(errors.FieldError("invalid", "spec", "either `defaultBackend` or `rules` must be specified", value=spec.get("rules")))
        for t, tls in enumerate(_list(spec.get("tls"))):
            for h, host in enumerate(_list(_dict(tls).get("hosts"))):
                if isinstance(host, str):
                    problems += [errors.FieldError("invalid", f"spec.tls[{t}].hosts[{h}]", msg, value=host) for msg in host_errors(host)]
            secret = _dict(tls).get("secretName")
            if isinstance(secret, str) and secret:
                problems += [errors.FieldError("invalid", f"spec.tls[{t}].secretName", msg, value=secret) for msg in dns1123_subdomain_errors(secret)]
        for r, rule in enumerate(_list(spec.get("rules"))):
            host = _dict(rule).get("host")
            if isinstance(host, str) and host:
                if _is_ip(host):
                    problems.append(errors.FieldError("invalid", f"spec.rules[{r}].host", "must be a DNS name, not an IP address", value=host))
                problems += [errors.FieldError("invalid", f"spec.rules[{r}].host", msg, value=host) for msg in host_errors(host)]
            http = _dict(rule).get("http") if isinstance(rule, dict) else None
            if http is None:
                continue
            where = f"spec.rules[{r}].http.paths"
            if not _dict(http).get("paths"):
                problems.append(errors.FieldError("required", where, ""))
            for p, path in enumerate(_list(_dict(http).get("paths"))):
                problems += _path_errors(_dict(path), f"{where}[{p}]")
        return problems


def host_errors(host: str) -> list[str]:
    """An Ingress host: IsWildcardDNS1123Subdomain when it has a '*', else IsDNS1123Subdomain."""
    if "*" not in host:
        return dns1123_subdomain_errors(host)
    problems = [max_len_error(253)] if byte_len(host) > 253 else []
    if not _WILDCARD.fullmatch(host):
        problems.append(regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return problems


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _path_errors(path: dict, where: str) -> list[errors.FieldError]:
    problems = []
    kind, value = path.get("pathType"), path.get("path", "")
    if kind is not None and kind not in PATH_TYPES:  # a missing one is the schema's (required)
        problems.append(not_supported(f"{where}.pathType", kind, PATH_TYPES))
    absolute = kind in ("Exact", "Prefix") or (kind == "ImplementationSpecific" and value)
    if absolute and isinstance(value, str) and not value.startswith("/"):
        problems.append(errors.FieldError("invalid", f"{where}.path", "must be an absolute path", value=value))
    return problems + backend_errors(path.get("backend"), f"{where}.backend")


def backend_errors(backend: Any, where: str) -> list[errors.FieldError]:
    """validateIngressBackend."""
    backend = _dict(backend)
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [errors.FieldError("invalid", where, "cannot set both resource and service backends", value="")]
    if resource is not None:
        return [errors.FieldError("required", f"{where}.resource.{key}", "") for key in ("kind", "name") if not _dict(resource).get(key)]
    if service is None:
        return [errors.FieldError("invalid", where, "resource or service backend is required", value="")]
    problems = [] if _dict(service).get("name") else [errors.FieldError("required", f"{where}.service.name", "")]
    port = _dict(_dict(service).get("port"))
    if port.get("name") and port.get("number"):
        problems.append(errors.FieldError("invalid", where, "cannot set both port name & port number", value=""))
    elif port.get("number") is not None and not (isinstance(port["number"], int) and 1 <= port["number"] <= 65535):
        problems.append(errors.FieldError("invalid", f"{where}.service.port.number", "must be between 1 and 65535, inclusive", value=port["number"]))
    elif not port.get("name") and not port.get("number"):
        problems.append(errors.FieldError("required", where, "port name or number is required"))
    return problems


def default_class(cluster: Cluster) -> dict | None:
    """The default IngressClass; with several, the newest (as kube since 1.28)."""
    found = None
    for stored in cluster.objects(INGRESS_CLASSES):
        if DEFAULT_CLASS_ANNOTATION.encode() not in stored.raw:
            continue
        candidate = stored.load()
        if (candidate["metadata"].get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) != "true":
            continue
        if found is None or candidate["metadata"].get("creationTimestamp", "") >= found["metadata"].get("creationTimestamp", ""):
            found = candidate
    return found


class IngressClassStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        _default_scope(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        _default_scope(new)
        return super().prepare_for_update(new, old, subresource=subresource)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        controller = spec.get("controller")
        problems = []
        if not controller:
            problems.append(errors.FieldError("required", "spec.controller", ""))
        elif isinstance(controller, str) and len(controller) > MAX_CONTROLLER:
            problems.append(errors.FieldError("too_long", "spec.controller", f"may not be more than {MAX_CONTROLLER} bytes"))
        if old is not None and controller != _dict(old.get("spec")).get("controller"):
            problems.append(errors.FieldError("invalid", "spec.controller", "field is immutable", value=controller))
        parameters = spec.get("parameters")
        if isinstance(parameters, dict):
            problems += _parameters_errors(parameters, "spec.parameters")
        return problems


def _default_scope(obj: dict) -> None:
    parameters = _dict(obj.get("spec")).get("parameters")
    if isinstance(parameters, dict) and parameters.get("scope") is None:
        parameters["scope"] = "Cluster"


def _parameters_errors(parameters: dict, where: str) -> list[errors.FieldError]:
    problems = [errors.FieldError("required", f"{where}.{key}", "") for key in ("kind", "name") if not parameters.get(key)]
    scope, namespace = parameters.get("scope"), parameters.get("namespace")
    if scope not in SCOPES:
        problems.append(not_supported(f"{where}.scope", scope, SCOPES))
    elif scope == "Namespace" and not namespace:
        problems.append(errors.FieldError("required", f"{where}.namespace", "`parameters.scope` is set to 'Namespace'"))
    elif scope == "Cluster" and namespace:
        problems.append(errors.FieldError("forbidden", f"{where}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return problems


class NetworkPolicyStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        _default_policy_types(obj)
        _omit_empty_rules(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        _default_policy_types(new)
        _omit_empty_rules(new)
        return super().prepare_for_update(new, old, subresource=subresource)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = label_selector_errors(spec.get("podSelector"), "spec.podSelector")
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            for r, rule in enumerate(_list(spec.get(direction))):
                where = f"spec.{direction}[{r}]"
                for p, port in enumerate(_list(_dict(rule).get("ports"))):
                    problems += _port_errors(_dict(port), f"{where}.ports[{p}]")
                for p, peer in enumerate(_list(_dict(rule).get(peers))):
                    problems += _peer_errors(_dict(peer), f"{where}.{peers}[{p}]")
        types = _list(spec.get("policyTypes"))
        for index, kind in enumerate(types):
            if kind not in POLICY_TYPES:
                problems.append(not_supported(f"spec.policyTypes[{index}]", kind, POLICY_TYPES))
        if len(types) > len(POLICY_TYPES):
            problems.append(errors.FieldError("invalid", "spec.policyTypes", "may not specify more than two policyTypes", value=types))
        return problems


def _peer_errors(peer: dict, where: str) -> list[errors.FieldError]:
    """ValidateNetworkPolicyPeer."""
    problems, count = [], 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            problems += label_selector_errors(peer[key], f"{where}.{key}")
    if peer.get("ipBlock") is not None:
        count += 1
        problems += _ip_block_errors(_dict(peer["ipBlock"]), f"{where}.ipBlock")
    if count == 0:
        problems.append(errors.FieldError("required", where, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        problems.append(errors.FieldError("forbidden", where, "may not specify both ipBlock and another peer"))
    return problems


def _ip_block_errors(block: dict, where: str) -> list[errors.FieldError]:
    """v1.32's ValidateIPBlock: a CIDR, and except entries strictly inside it (the first
    unparseable one ends the check, as kube's early return)."""
    cidr = block.get("cidr")
    if not cidr:
        return [errors.FieldError("required", f"{where}.cidr", "")]
    network = _network(cidr)
    if network is None:
        return [errors.FieldError("invalid", f"{where}.cidr", "not a valid CIDR", value=cidr)]
    problems = []
    for index, entry in enumerate(_list(block.get("except"))):
        inner = _network(entry)
        if inner is None:
            problems.append(errors.FieldError("invalid", f"{where}.except[{index}]", "not a valid CIDR", value=entry))
            return problems
        if inner.version != network.version or inner.network_address not in network or network.prefixlen >= inner.prefixlen:
            problems.append(errors.FieldError("invalid", f"{where}.except[{index}]", "must be a strict subset of `cidr`", value=entry))
    return problems


def _network(value: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """net.ParseCIDR: an address and a prefix length; host bits may be set."""
    if not isinstance(value, str) or "/" not in value:
        return None
    try:
        return ipaddress.ip_network(value, strict=False)
    except ValueError:
        return None


def _omit_empty_rules(obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        rules = spec.get(direction)
        if rules == []:
            del spec[direction]
        for rule in rules or []:
            for key in (peers, "ports"):
                if isinstance(rule, dict) and rule.get(key) == []:
                    del rule[key]


def _default_policy_types(obj: dict) -> None:
    """SetDefaults_NetworkPolicy."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def _port_errors(port: dict, where: str) -> list[errors.FieldError]:
    problems = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        problems.append(not_supported(f"{where}.protocol", protocol, PROTOCOLS))
    end, number = port.get("endPort"), port.get("port")
    if end is not None:
        if not isinstance(number, int):
            problems.append(errors.FieldError("required", f"{where}.port", "When endPort is specified, port must be specified"))
        elif isinstance(end, int) and end < number:
            problems.append(errors.FieldError("invalid", f"{where}.endPort", "must be greater than or equal to `port`", value=end))
    return problems
