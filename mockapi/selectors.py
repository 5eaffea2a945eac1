"""Label and field selectors, parsed as ``k8s.io/apimachinery/pkg/labels`` and ``.../fields`` do.

Both are parsed once into a few precomputed checks, because ``matches`` runs for every object of
a list and for every watch event times every watcher. Parse errors are 400 Bad Request with
apimachinery's wording (validation messages as released in Kubernetes 1.2x–1.33).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from mockapi import errors, names
from mockapi.schema.goformat import go_quote

# -- label selector -------------------------------------------------------------------------

# selection.Operator values
EXISTS, DOES_NOT_EXIST = "exists", "!"
EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "=", "==", "!="
IN, NOT_IN, GREATER_THAN, LESS_THAN = "in", "notin", "gt", "lt"
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_API_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}  # metav1.LabelSelectorOperator

# lexer tokens
_EOS, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _IDENT, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(13)
_TOKENS = {
    ")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DOUBLE_EQ, "=": _EQ, ">": _GT,
    "in": _IN, "<": _LT, "!=": _NEQ, "notin": _NOTIN, "(": _OPEN,
}  # fmt: skip
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_OF = {
    _IN: IN, _EQ: EQUALS, _DOUBLE_EQ: DOUBLE_EQUALS, _GT: GREATER_THAN,
    _LT: LESS_THAN, _NOTIN: NOT_IN, _NEQ: NOT_EQUALS,
}  # fmt: skip
_MISSING = object()


class Requirement(NamedTuple):
    """One ``key op values`` term of a label selector; values sorted and unique."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return "!" + self.key
        if self.operator in (IN, NOT_IN):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(self.operator, self.operator)
        return f"{self.key}{symbol}{self.values[0]}"


class LabelSelector:
    """A parsed label selector: an AND of requirements, sorted by key."""

    __slots__ = ("requirements", "_checks")

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self._checks = tuple(_label_check(r) for r in self.requirements)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """``labels.Parse``; "" matches everything. Raises 400 with apimachinery's message."""
        try:
            return cls(_LabelParser(text).parse())
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None

    @classmethod
    def from_api(cls, selector: Mapping) -> LabelSelector | None:
        """``metav1.LabelSelectorAsSelector`` of an object's selector (``matchLabels`` and
        ``matchExpressions``, already validated with the object); None for an operator it does
        not know (kube's conversion fails: the selector matches nothing)."""
        requirements = [Requirement(key, EQUALS, (value,)) for key, value in (selector.get("matchLabels") or {}).items()]
        for expression in selector.get("matchExpressions") or ():
            operator = _API_OPERATORS.get(expression.get("operator"))
            if operator is None:
                return None
            values = tuple(sorted(set(expression.get("values") or ()))) if operator in (IN, NOT_IN) else ()
            requirements.append(Requirement(expression.get("key"), operator, values))
        return cls(requirements)

    @classmethod
    def render(cls, selector: Any) -> str | None:
        """``metav1.LabelSelectorAsSelector(selector).String()``: "" for no selector (or an empty
        one), None where the conversion fails (an unknown operator, a malformed selector)."""
        if not isinstance(selector, Mapping):
            return ""
        expressions = selector.get("matchExpressions") or ()
        if not isinstance(selector.get("matchLabels") or {}, Mapping) or not all(isinstance(e, Mapping) for e in expressions):
            return None
        found = cls.from_api(selector)
        return None if found is None else str(found)

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels if labels is not None else {}
        for check in self._checks:
            if not check(labels):
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"LabelSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelSelector) and other.requirements == self.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)


def _label_check(r: Requirement) -> Callable[[Mapping[str, str]], bool]:
    key, values = r.key, r.values
    if r.operator == EXISTS:
        return lambda labels: key in labels
    if r.operator == DOES_NOT_EXIST:
        return lambda labels: key not in labels
    if r.operator in (GREATER_THAN, LESS_THAN):
        bound, above = _parse_int64(values[0]), r.operator == GREATER_THAN
        return lambda labels: _compare(labels.get(key), bound, above=above)
    negate = r.operator in (NOT_EQUALS, NOT_IN)
    if len(values) == 1:
        value = values[0]
        if negate:
            return lambda labels: labels.get(key, _MISSING) != value
        return lambda labels: labels.get(key, _MISSING) == value
    allowed = frozenset(values)
    if negate:
        return lambda labels: labels.get(key, _MISSING) not in allowed
    return lambda labels: labels.get(key, _MISSING) in allowed


def _compare(label: str | None, bound: int | None, *, above: bool) -> bool:
    actual = _parse_int64(label) if isinstance(label, str) else None
    if actual is None or bound is None:
        return False
    return actual > bound if above else actual < bound


_INT64 = re.compile(r"[+-]?[0-9]{1,19}\Z")


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None."""
    if not _INT64.match(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


class _LabelParser:
    """The recursive-descent parser of labels.Parse, token for token."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def lookahead(self, *, values: bool = True) -> tuple[int, str]:
        return _in_context(self.items[self.position], values)

    def consume(self, *, values: bool = True) -> tuple[int, str]:
        self.position += 1
        return _in_context(self.items[self.position - 1], values)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token, literal = self.lookahead()
            if token == _EOS:
                return requirements
            if token not in (_IDENT, _NOT):
                raise ValueError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except ValueError as exc:
                raise ValueError(f"unable to parse requirement: {exc}") from None
            token, literal = self.consume()
            if token == _EOS:
                return requirements
            if token != _COMMA:
                raise ValueError(f"found '{literal}', expected: ',' or 'end of string'")
            token, literal = self.lookahead()
            if token not in (_IDENT, _NOT):
                raise ValueError(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        key, operator = self.key_and_inferred_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return _requirement(key, operator, [])
        operator = self.operator()
        values = self.value_set() if operator in (IN, NOT_IN) else self.exact_value()
        return _requirement(key, operator, sorted(values))

    def key_and_inferred_operator(self) -> tuple[str, str]:
        operator = ""
        token, literal = self.consume()
        if token == _NOT:
            operator = DOES_NOT_EXIST
            token, literal = self.consume()
        if token != _IDENT:
            raise ValueError(f"found '{literal}', expected: identifier")
        problems = names.qualified_name_errors(literal)
        if problems:
            raise ValueError(_invalid("<nil>", literal, problems))
        if self.lookahead()[0] in (_EOS, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def operator(self) -> str:
        token, literal = self.consume(values=False)
        if token not in _OPERATOR_OF:
            raise ValueError(f"found '{literal}', expected: {_BINARY_OPERATORS}")
        return _OPERATOR_OF[token]

    def value_set(self) -> set[str]:
        token, literal = self.consume()
        if token != _OPEN:
            raise ValueError(f"found '{literal}' expected: '('")
        token, literal = self.lookahead()
        if token == _CLOSE:  # "()"
            self.consume()
            return {""}
        if token not in (_IDENT, _COMMA):
            raise ValueError(f"found '{literal}', expected: ',', ')' or identifier")
        values = self.identifiers()
        self.consume()  # the ")" identifiers() stopped at
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            token, literal = self.consume()
            if token == _IDENT:
                values.add(literal)
                following, text = self.lookahead()
                if following == _CLOSE:
                    return values
                if following != _COMMA:
                    raise ValueError(f"found '{text}', expected: ',' or ')'")
            elif token == _COMMA:  # empty values: "(,a", "a,,b", "a,)"
                following = self.lookahead()[0]
                if not values or following in (_CLOSE, _COMMA):
                    values.add("")
                if following == _CLOSE:
                    return values
            else:
                raise ValueError(f"found '{literal}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_EOS, _COMMA):
            return {""}
        token, literal = self.consume()
        if token != _IDENT:
            raise ValueError(f"found '{literal}', expected: identifier")
        return {literal}


def _in_context(item: tuple[int, str], values: bool) -> tuple[int, str]:
    """In a values context the keywords ``in`` and ``notin`` are plain identifiers."""
    token, literal = item
    if values and token in (_IN, _NOTIN):
        return _IDENT, literal
    return token, literal


def _lex(text: str) -> list[tuple[int, str]]:
    """labels.Lexer over the whole input; a NUL byte ends it, like Go's read() returning 0."""
    items: list[tuple[int, str]] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= end or text[pos] == "\0":
            items.append((_EOS, ""))
            return items
        if text[pos] in _SPECIAL:
            token, literal, pos = _scan_symbol(text, pos)
        else:
            start = pos
            while pos < end and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE and text[pos] != "\0":
                pos += 1
            literal = text[start:pos]
            pos += 1 if pos < end and text[pos] == "\0" else 0
            token = _TOKENS.get(literal, _IDENT)
        items.append((token, literal))


def _scan_symbol(text: str, pos: int) -> tuple[int, str, int]:
    """The longest run of special characters that is still an operator."""
    token, literal, buffer = _EOS, "", ""
    while pos < len(text) and text[pos] in _SPECIAL:
        buffer += text[pos]
        if buffer in _TOKENS:
            token, literal = _TOKENS[buffer], buffer
        else:
            break
        pos += 1
    return token, literal, pos


def _requirement(key: str, operator: str, values: list[str]) -> Requirement:
    """labels.NewRequirement's checks (the key was checked by the parser already)."""
    problems: list[str] = []
    if operator in (GREATER_THAN, LESS_THAN):
        for i, value in enumerate(values):
            if _parse_int64(value) is None:
                problems.append(_invalid(f"values[{i}]", value, ["for 'Gt', 'Lt' operators, the value must be an integer"]))
    for i, value in enumerate(values):
        value_problems = names.label_value_errors(value)
        if value_problems:
            problems.append(_invalid(f"values[{i}][{key}]", value, value_problems))
    if problems:
        raise ValueError(_aggregate(problems))
    return Requirement(key, operator, tuple(values))


def _invalid(field: str, value: str, problems: list[str]) -> str:
    return f"{field}: Invalid value: {go_quote(value)}: {'; '.join(problems)}"


def _aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# -- field selector -------------------------------------------------------------------------


class FieldSelector:
    """A parsed field selector: an AND of ``field=value`` / ``field!=value`` terms."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Iterable[tuple[str, str, bool]] = ()) -> None:
        self._terms = tuple(terms)  # (field, value, negated), in the order fields.ParseSelector sorts them

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """``fields.ParseSelector``; "" matches everything. Raises 400 with apimachinery's message."""
        terms = []
        for part in sorted(_split_terms(text)):
            if not part:
                continue
            split = _split_term(part)
            if split is None:
                raise errors.bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
            field, operator, raw = split
            value = _unescape(raw)
            if field or value:  # hasTerm.Transform drops a term whose field and value are both empty
                terms.append((field, value, operator == "!="))
        return cls(terms)

    def matches(self, fields: Mapping[str, str]) -> bool:
        for field, value, negated in self._terms:
            if (fields.get(field, "") == value) is negated:
                return False
        return True

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(field for field, _, _ in self._terms)

    @property
    def empty(self) -> bool:
        return not self._terms

    def exact_name(self) -> str | None:
        """The name a ``metadata.name=x`` term requires (RequiresExactMatch), else None."""
        for field, value, negated in self._terms:
            if field == "metadata.name" and not negated:
                return value
        return None

    def __str__(self) -> str:
        return ",".join(f"{f}{'!=' if n else '='}{_escape(v)}" for f, v, n in self._terms)

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSelector) and other._terms == self._terms

    def __hash__(self) -> int:
        return hash(self._terms)


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash (the backslash stays in the term)."""
    if not text:
        return []
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(lhs, operator, rhs) at the first operator; no escaping on the left-hand side."""
    for i in range(len(term)):
        for operator in ("!=", "==", "="):
            if term.startswith(operator, i):
                return term[:i], operator, term[i + len(operator) :]
    return None


def _unescape(value: str) -> str:
    """fields.UnescapeValue: only ``\\\\``, ``\\,`` and ``\\=`` are escapes; bare , and = are errors."""
    if not any(ch in value for ch in "\\,="):
        return value
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise errors.bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise errors.bad_request(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise errors.bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
