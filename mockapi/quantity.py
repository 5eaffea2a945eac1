"""Exact Kubernetes quantities (``resource.Quantity``): the real grammar, never floats.

The grammar is apimachinery's ``ParseQuantity``::

    <quantity>  ::= <sign>? <number> <suffix>
    <number>    ::= <digits> | <digits> "." <digits>? | "." <digits>
    <suffix>    ::= "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E"     (decimal SI)
                  | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"                     (binary SI)
                  | ("e" | "E") <sign>? <digits>                                 (decimal exponent)

so ``1K``, ``NaN``, `` 1``, ``1e3Gi`` and ``1.5e2.5`` are errors (``kubernetes.utils.parse_quantity``
accepts several of them). As in apimachinery, a value is rounded *up* (away from zero) to a whole
nano and its magnitude is capped at 2^63-1. A :class:`Quantity` holds the value as an integer
number of nano-units, so arithmetic and comparison are exact; ``str()`` gives Kubernetes'
canonical form in the format the value was written in (``1536Mi``, ``500m``, ``1e3``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

NANO = 10**9
MAX = 2**63 - 1  # apimachinery caps every quantity at this magnitude
BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_GRAMMAR = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(.*)", re.DOTALL)
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_SUFFIXES = "n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or e<exponent>"
_KUBE_REGEXP = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"  # apimachinery's wording of the grammar


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity; the message says why and what is allowed."""


@dataclass(frozen=True, order=True)
class Quantity:
    """An exact quantity: ``nanos`` nano-units. Equal and ordered by value (``1Gi == 1024Mi``)."""

    nanos: int
    format: str = field(default=DECIMAL_SI, compare=False)

    @classmethod
    def of(cls, value: int | Fraction, format: str = DECIMAL_SI) -> "Quantity":
        """A quantity of ``value`` units (rounded up to a nano, capped like apimachinery)."""
        return cls(_normalize(Fraction(value) * NANO), format)

    @property
    def value(self) -> Fraction:
        return Fraction(self.nanos, NANO)

    def is_integer(self) -> bool:
        return self.nanos % NANO == 0

    def __str__(self) -> str:
        return canonical(self)

    def __repr__(self) -> str:
        return f"Quantity({canonical(self)!r})"


_PARSED: dict[str, Quantity] = {}  # text -> its (immutable) quantity; the same few texts repeat
_PARSED_SIZE = 4096


def parse(text: str | int) -> Quantity:
    """Parse a quantity as apimachinery does; raises :class:`QuantityError` with the reason.
    Texts parsed before are remembered (at most 4,096; the pools of a cluster share a few)."""
    if text.__class__ is str:
        found = _PARSED.get(text)
        if found is None:
            found = _parse(text)
            if len(_PARSED) >= _PARSED_SIZE:
                _PARSED.clear()
            _PARSED[text] = found
        return found
    return _parse(text)


def _parse(text: str | int) -> Quantity:
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise QuantityError(f"invalid quantity {text!r}: must be a string or an integer")
    if isinstance(text, int):
        return Quantity(_normalize(Fraction(text) * NANO), DECIMAL_SI)
    match = _GRAMMAR.fullmatch(text)
    if not text or match is None:
        raise QuantityError(f"invalid quantity {text!r}: quantities must match the regular expression '{_KUBE_REGEXP}'")
    sign, number, suffix = match.groups()
    amount = Fraction(number) * (-1 if sign == "-" else 1)
    return Quantity(_normalize(_scale(text, amount, suffix)), _format_of(suffix))


def parse_or_none(text) -> Quantity | None:
    try:
        return parse(text)
    except QuantityError:
        return None


def _scale(text: str, amount: Fraction, suffix: str) -> Fraction:
    """``amount`` × the suffix's multiplier, in nano-units."""
    if suffix in _BINARY:
        return amount * (1 << _BINARY[suffix]) * NANO
    if suffix in _DECIMAL:
        return amount * Fraction(10) ** (_DECIMAL[suffix] + 9)
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is None:
        raise QuantityError(f"invalid quantity {text!r}: unknown suffix {suffix!r} (use {_SUFFIXES})")
    power = int(exponent.group(1))
    if amount == 0:
        return Fraction(0)
    if power > 40:  # beyond the cap whatever the mantissa: don't build a huge number
        return Fraction(MAX * NANO + 1) * (1 if amount > 0 else -1)
    if power < -40:  # below a nano whatever the mantissa: rounds up to one
        return Fraction(1, 2) * (1 if amount > 0 else -1)
    return amount * Fraction(10) ** (power + 9)


def _format_of(suffix: str) -> str:
    if suffix in _BINARY:
        return BINARY_SI
    return DECIMAL_SI if suffix in _DECIMAL else DECIMAL_EXPONENT


def _normalize(nanos: Fraction) -> int:
    """Round the magnitude up to a whole nano and cap it at 2^63-1 units."""
    magnitude = abs(nanos)
    whole = -(-magnitude.numerator // magnitude.denominator)
    whole = min(whole, MAX * NANO)
    return whole if nanos >= 0 else -whole


# ------------------------------------------------------------------ canonical form
def canonical(q: Quantity) -> str:
    """apimachinery's ``CanonicalizeBytes``: an integer mantissa and the largest exact suffix."""
    if q.format == BINARY_SI and abs(q.nanos) >= 1024 * NANO and q.nanos % NANO == 0:
        return _binary(q.nanos // NANO)
    return _decimal(q.nanos, exponent_form=q.format == DECIMAL_EXPONENT)


def _binary(units: int) -> str:
    mantissa, power = units, 0
    while mantissa % 1024 == 0 and power < 60 and mantissa != 0:
        mantissa //= 1024
        power += 10
    suffix = next((s for s, p in _BINARY.items() if p == power), "")
    return f"{mantissa}{suffix}"


def _decimal(nanos: int, *, exponent_form: bool) -> str:
    if nanos == 0:
        return "0"
    mantissa, exponent = nanos, -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if exponent_form:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"


# ------------------------------------------------------------------ arithmetic helpers
def round_up(amount: int, block: int) -> int:
    """``amount`` rounded up to a multiple of ``block`` (both in nano-units; block > 0)."""
    return -(-amount // block) * block
