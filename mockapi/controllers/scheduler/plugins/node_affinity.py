"""NodeAffinity: ``spec.nodeSelector`` and ``spec.affinity.nodeAffinity`` (kube's plugin), plus the
profile's ``addedAffinity`` (``NodeAffinityArgs``).

Filter: every ``nodeSelector`` label must match, and one of the required ``nodeSelectorTerms``
(ORed; within a term, matchExpressions and matchFields ANDed; an empty term matches nothing; an
invalid requirement makes its term match nothing, as kube's parse error does). Score: the sum of
the weights of the preferred terms the node matches, normalized to 0..100 by the highest.

PreFilter (kube's): a required affinity whose every term names nodes (``matchFields``
``metadata.name In``) restricts the cycle to those nodes; terms naming no node in common are
``pod affinity terms conflict``. **Decision**: kube's PreFilter also returns Skip for a pod with
nothing to check, which drops Filter for it; here Filter stays and answers at once (the attempt
record keeps listing the plugin's verdict), which decides the same.

``addedAffinity`` applies to every pod of the profile (kube-scheduler's "scheduler-enforced node
affinity"): its ``requiredDuringSchedulingIgnoredDuringExecution`` is a NodeSelector each node must
match first (``node(s) didn't match scheduler-enforced node affinity``, UnschedulableAndUnresolvable),
and its ``preferredDuringSchedulingIgnoredDuringExecution`` terms add to every pod's score. The args
are validated as kube's ``ValidateNodeAffinityArgs`` does (its field paths and messages, through
``labels.NewRequirement``), so an invalid term refuses the configuration at start. They belong to
the plugin instance, that is to one profile: the framework's remembered verdicts and scores are
keyed by the plugin instance, so two profiles never share one.
"""

from __future__ import annotations

import re

from mockapi import names
from mockapi.controllers.scheduler import events, status as status_
from mockapi.controllers.scheduler.plugin import Plugin, default_normalize
from mockapi.schema.goformat import go_quote

REASON = "node(s) didn't match Pod's node affinity/selector"  # kube's ErrReasonPod
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"  # kube's errReasonEnforced
CONFLICT_REASON = "pod affinity terms conflict"  # kube's errReasonConflict
CONSTRAINED = ("NodeAffinity", "constrained")  # the cycle state's key: does Filter have anything to check
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
NAME_FIELD = "metadata.name"
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")  # kube's validSelectorOperators
FIELD_OPERATORS = ("In", "NotIn")  # kube's validFieldSelectorOperators
_GO_INT64 = re.compile(r"[+-]?[0-9]+")


def node_affinity(pod: dict) -> dict:
    return ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}


def matches_requirement(expression: dict, value: str | None) -> bool:
    """One ``NodeSelectorRequirement`` against a label (or field) value; None: absent."""
    operator, values = expression.get("operator"), expression.get("values") or []
    if operator == "In":
        return bool(values) and value is not None and value in values
    if operator == "NotIn":
        return bool(values) and (value is None or value not in values)
    if operator == "Exists":
        return not values and value is not None
    if operator == "DoesNotExist":
        return not values and value is None
    if operator in ("Gt", "Lt"):
        bound, have = _int(values[0]) if len(values) == 1 else None, _int(value)
        if bound is None or have is None:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def _int(text) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def matches_anything(term: dict) -> bool:
    """Whether a term has a requirement at all (kube's ``isEmptyNodeSelectorTerm``, negated)."""
    return bool(term.get("matchExpressions") or term.get("matchFields"))


def matches_term(term: dict, node: dict) -> bool:
    """A ``NodeSelectorTerm``: its expressions (labels) and fields (``metadata.name``) all match."""
    if not matches_anything(term):
        return False
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    labels = (node.get("metadata") or {}).get("labels") or {}
    if not all(matches_requirement(e, labels.get(e.get("key", ""))) for e in expressions):
        return False
    return all(f.get("key") == NAME_FIELD and f.get("operator") in FIELD_OPERATORS and matches_requirement(f, node["metadata"]["name"]) for f in fields)


def matches_selector(selector: dict, node: dict) -> bool:
    """A ``NodeSelector``: one of its terms matches (kube's ``NodeSelector.Match``)."""
    return any(matches_term(term, node) for term in selector.get("nodeSelectorTerms") or [])


def matches_required(pod: dict, node: dict) -> bool:
    """``nodeSelector`` and the required node affinity (kube's ``RequiredNodeAffinity.Match``)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = (pod.get("spec") or {}).get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = node_affinity(pod).get(REQUIRED)
    if required is None:
        return True
    return matches_selector(required, node)


def preferred_score(terms: list, node: dict) -> int:
    """The sum of the weights of the preferred terms the node matches."""
    return sum(int(t.get("weight", 0)) for t in terms if matches_term(t.get("preference") or {}, node))


def named_nodes(required: dict | None) -> set[str] | None:
    """kube's PreFilter shortcut: the nodes a required affinity can only match when every term
    names nodes (``matchFields`` ``metadata.name In``; within a term the names intersect, across
    terms they add up); None when some term leaves every node possible."""
    terms = (required or {}).get("nodeSelectorTerms") or []
    if not terms:
        return None
    found: set[str] = set()
    for term in terms:
        in_term = None
        for requirement in term.get("matchFields") or []:
            if requirement.get("key") == NAME_FIELD and requirement.get("operator") == "In":
                values = set(requirement.get("values") or [])
                in_term = values if in_term is None else in_term & values
        if in_term is None:
            return None
        found |= in_term
    return found


# ---------------------------------------------------------------------------- NodeAffinityArgs
def validate_added_affinity(args: dict) -> list[tuple[str, str]]:
    """kube's ``ValidateNodeAffinityArgs``: each term of ``addedAffinity`` parsed as
    ``NewNodeSelector`` / ``NewPreferredSchedulingTerms`` parse it, with their field paths (a
    preferred term's path has no ``.preference``, as kube's has not; a term of weight 0 or with
    no requirement is skipped, as kube skips it); unknown fields as strict decoding refuses them."""
    problems = _unknown(args, ("addedAffinity",), "")
    added = args.get("addedAffinity")
    if added is None:
        return problems
    if not isinstance(added, dict):
        return problems + [("addedAffinity", "Invalid value: must be a mapping")]
    problems += _unknown(added, (REQUIRED, PREFERRED), "addedAffinity.")
    required = added.get(REQUIRED)
    if required is not None:
        path = f"addedAffinity.{REQUIRED}"
        if not isinstance(required, dict):
            problems.append((path, "Invalid value: must be a mapping"))
        else:
            for i, term in enumerate(_mappings(required.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms", problems)):
                if matches_anything(term):
                    problems += _term_problems(term, f"{path}.nodeSelectorTerms[{i}]")
    path = f"addedAffinity.{PREFERRED}"
    for i, term in enumerate(_mappings(added.get(PREFERRED), path, problems)):
        preference = term.get("preference") or {}
        weight = term.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int):
            problems.append((f"{path}[{i}].weight", f"Invalid value: {weight!r}: must be an integer"))
        elif weight and isinstance(preference, dict) and matches_anything(preference):
            problems += _term_problems(preference, f"{path}[{i}]")
    return problems


def _term_problems(term: dict, path: str) -> list[tuple[str, str]]:
    """kube's ``newNodeSelectorTerm``: labels.NewRequirement's checks for each expression, the
    field selector's for each field."""
    problems: list[tuple[str, str]] = []
    for j, expression in enumerate(_mappings(term.get("matchExpressions"), f"{path}.matchExpressions", problems)):
        problems += _expression_problems(expression, f"{path}.matchExpressions[{j}]")
    for j, requirement in enumerate(_mappings(term.get("matchFields"), f"{path}.matchFields", problems)):
        where, operator, values = f"{path}.matchFields[{j}]", requirement.get("operator"), requirement.get("values")
        if operator not in FIELD_OPERATORS:
            problems.append((f"{where}.operator", _not_supported(operator, FIELD_OPERATORS)))
        elif len(values or ()) != 1:
            problems.append((f"{where}.values", f"Invalid value: {_go_strings(values)}: must have one element"))
    return problems


def _expression_problems(expression: dict, path: str) -> list[tuple[str, str]]:
    operator, key, values = expression.get("operator"), expression.get("key", ""), expression.get("values")
    if operator not in OPERATORS:
        return [(f"{path}.operator", _not_supported(operator, OPERATORS))]
    problems = []
    key_errors = names.qualified_name_errors(key) if isinstance(key, str) else ["must be a string"]
    if key_errors:
        problems.append((f"{path}.key", f"Invalid value: {go_quote(str(key))}: {'; '.join(key_errors)}"))
    values_list = [str(v) for v in values] if isinstance(values, list) else []
    if operator in ("In", "NotIn") and not values_list:
        problems.append((f"{path}.values", f"Invalid value: {_go_strings(values)}: for 'in', 'notin' operators, values set can't be empty"))
    elif operator in ("Exists", "DoesNotExist") and values_list:
        problems.append((f"{path}.values", f"Invalid value: {_go_strings(values)}: values set must be empty for exists and does not exist"))
    elif operator in ("Gt", "Lt"):
        if len(values_list) != 1:
            problems.append((f"{path}.values", f"Invalid value: {_go_strings(values)}: for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(values_list):
            if not _is_int64(value):
                problems.append((f"{path}.values[{i}]", f"Invalid value: {go_quote(value)}: for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(values_list):
        value_errors = names.label_value_errors(value)
        if value_errors:
            problems.append((f"{path}.values[{i}][{key}]", f"Invalid value: {go_quote(value)}: {'; '.join(value_errors)}"))
    return problems


def _is_int64(text: str) -> bool:
    """Go's ``strconv.ParseInt(text, 10, 64)`` succeeds."""
    return bool(_GO_INT64.fullmatch(text)) and -(2**63) <= int(text) < 2**63


def _go_strings(values) -> str:
    """Go's ``%#v`` of a ``[]string`` (how field.Invalid prints a values list)."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def _not_supported(value, supported) -> str:
    shown = go_quote(value) if isinstance(value, str) else ('""' if value is None else repr(value))
    return f"Unsupported value: {shown}: supported values: " + ", ".join(go_quote(s) for s in supported)


def _mappings(value, path: str, problems: list) -> list[dict]:
    """A list of mappings (None: empty); anything else is a problem and yields nothing."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        problems.append((path, "Invalid value: must be a list of mappings"))
        return []
    return value


def _unknown(data: dict, allowed, prefix: str) -> list[tuple[str, str]]:
    return [(f"{prefix}{name}", f'unknown field "{name}"') for name in data if name not in allowed]


class NodeAffinity(Plugin):
    NAME = "NodeAffinity"
    PURE_FILTER = True  # the added affinity is the instance's own (one profile's): memos key by the instance
    PURE_SCORE = True
    EVENTS = (events.NODE_ADD, events.NODE_UPDATE)

    def __init__(self, args: dict | None = None, handle=None) -> None:
        super().__init__(args, handle)
        added = self.args.get("addedAffinity") or {}
        self.added_required: dict | None = added.get(REQUIRED)  # a NodeSelector every node must match, or None
        # kube's NewPreferredSchedulingTerms leaves out the terms of weight 0 and the empty ones
        self.added_preferred = [t for t in added.get(PREFERRED) or [] if t.get("weight") and matches_anything(t.get("preference") or {})]
        self._enforced = status_.unresolvable(ENFORCED_REASON, plugin=self.NAME)

    @classmethod
    def validate_args(cls, args: dict) -> list[tuple[str, str]]:
        return validate_added_affinity(args)

    def pre_filter(self, state, pod, snapshot):
        """The pod's constraints once per cycle, and kube's node-name shortcut. The added affinity
        is left to Filter on the nodes kept (kube's PreFilter shortcut reads the pod's alone)."""
        required = node_affinity(pod).get(REQUIRED)
        state[CONSTRAINED] = bool((pod.get("spec") or {}).get("nodeSelector")) or required is not None
        restricted = named_nodes(required)
        if restricted is None:
            return status_.SUCCESS
        if not restricted:
            return status_.unresolvable(CONFLICT_REASON)
        state[("node_names", self.NAME)] = restricted
        return status_.SUCCESS

    def filter(self, state, pod, node_info):
        if self.added_required is not None and not matches_selector(self.added_required, node_info.node):
            return self._enforced
        constrained = state.get(CONSTRAINED)
        if constrained is None:  # PreFilter did not run (disabled): whether the pod has a nodeSelector or a required affinity
            spec = pod.get("spec") or {}
            constrained = state[CONSTRAINED] = bool(spec.get("nodeSelector")) or node_affinity(pod).get(REQUIRED) is not None
        if not constrained or matches_required(pod, node_info.node):
            return status_.SUCCESS
        return status_.unresolvable(REASON)

    def pre_score(self, state, pod, node_infos):
        preferred = node_affinity(pod).get(PREFERRED) or []
        if not preferred and not self.added_preferred:
            return status_.skip()
        state[self.NAME] = preferred
        return status_.SUCCESS

    def score(self, state, pod, node_info):
        preferred = state.get(self.NAME)
        if preferred is None:  # PreScore did not run (kube computes the terms here then)
            preferred = node_affinity(pod).get(PREFERRED) or []
        score = preferred_score(preferred, node_info.node)
        return score + preferred_score(self.added_preferred, node_info.node) if self.added_preferred else score

    def normalize_score(self, state, pod, scores):
        default_normalize(scores)
