"""The string formats a CRD may use and its ``pattern`` regexps, checked as kube-apiserver checks them.

Formats: the ones apiextensions keeps (``validation/formats.go``), checked as go-openapi/strfmt
does; others are ignored. Patterns: compiled with RE2, the engine kube-apiserver uses.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import ipaddress
import re
from typing import Any, Callable

import re2

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME_CLOCK = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
_GO_DURATION = re.compile(r"[-+]?(0|((\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)")
_LOOSE_DURATION = re.compile(r"(\d+)\s*([A-Za-z\u00b5]+)")
_DURATION_UNITS = (("ns", "nano"), ("us", "\u00b5s", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"),
                   ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))  # fmt: skip
_UUID = r"[0-9a-f]{8}-?[0-9a-f]{4}-?%s[0-9a-f]{3}-?%s[0-9a-f]{3}-?[0-9a-f]{12}"
_HOST_LABEL = r"[^\W_](?:(?:[^\W_]|-){0,61}[^\W_])?"
_HOSTNAME = re.compile(rf"[^\W_](?:-?[^\W_]{{0,62}})?|(?:{_HOST_LABEL}\.)+[^\W\d_]{{2,63}}")
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_REGEX_FORMATS = {
    "uuid": re.compile(_UUID % ("[0-9a-f]", "[0-9a-f]"), re.I),
    "uuid3": re.compile(_UUID % ("3", "[0-9a-f]"), re.I),
    "uuid4": re.compile(_UUID % ("4", "[89ab]"), re.I),
    "uuid5": re.compile(_UUID % ("5", "[89ab]"), re.I),
    "hexcolor": re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": re.compile(rf"rgb\({_OCTET},{_OCTET},{_OCTET}\)"),
    "bsonobjectid": re.compile(r"[0-9a-fA-F]{24}"),
    "email": re.compile(r"(?:[^<>]*<)?[^@\s<>]+@[^@\s<>]+>?"),
}


def _is_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if not match:
        return False
    try:
        datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: an RFC 3339 date, 'T', and hh:mm:ss[.frac] with Z or ±hh:mm. Remembered
    for short texts: a status write sends its conditions' unchanged timestamps again and again."""
    if len(text) > _REMEMBERED_DATE_TIME:
        return _date_time(text)
    return _remembered_date_time(text)


def _date_time(text: str) -> bool:
    parts = text.lower().split("t")
    if len(text) < 4 or len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _DATE_TIME_CLOCK.fullmatch(parts[1])
    return bool(match) and match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


_REMEMBERED_DATE_TIME = 40  # "2006-01-02T15:04:05.999999999+07:00" is 35: longer texts are not kept
_remembered_date_time = functools.lru_cache(maxsize=1024)(_date_time)


def _is_duration(text: str) -> bool:
    """strfmt.ParseDuration: a Go duration, or any '<n> <unit>' it can make sense of."""
    if _GO_DURATION.fullmatch(text):
        return True
    for _, unit in _LOOSE_DURATION.findall(text):
        unit = unit.lower()
        for variants in _DURATION_UNITS:
            if unit in variants or unit.startswith(variants[-1]):
                return True
    return False


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _parses_as_ip(text: str) -> bool:
    if "%" in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _is_cidr(text: str) -> bool:
    address, slash, prefix = text.rpartition("/")
    if not slash or not (prefix.isascii() and prefix.isdigit()) or not _parses_as_ip(address):
        return False
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return True


def _is_mac(text: str) -> bool:
    """net.ParseMAC: 6, 8 or 20 octets as xx:xx or xx-xx, or 3, 4 or 10 groups as xxxx.xxxx."""
    for separator, width, counts in ((":", 2, (6, 8, 20)), ("-", 2, (6, 8, 20)), (".", 4, (3, 4, 10))):
        groups = text.split(separator)
        if len(groups) in counts and all(len(g) == width and _is_hex(g) for g in groups):
            return True
    return False


def _is_hex(text: str) -> bool:
    return all(ch in "0123456789abcdefABCDEF" for ch in text)


def _is_uri(text: str) -> bool:
    """url.ParseRequestURI: an absolute URI or an absolute path, without control characters."""
    if not text or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return False
    return text.startswith("/") or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text) is not None


def _is_hostname(text: str) -> bool:
    return len(text) <= 255 and _HOSTNAME.fullmatch(text) is not None


_FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _is_date,
    "datetime": _is_date_time,
    "duration": _is_duration,
    "byte": _is_byte,
    "ipv4": lambda text: "." in text and _parses_as_ip(text),
    "ipv6": lambda text: ":" in text and _parses_as_ip(text),
    "cidr": _is_cidr,
    "mac": _is_mac,
    "uri": _is_uri,
    "hostname": _is_hostname,
    "password": lambda text: True,
    **{name: (lambda text, rx=rx: rx.fullmatch(text) is not None) for name, rx in _REGEX_FORMATS.items()},
}


def _format_checker(fmt: Any) -> Callable[[str], bool] | None:
    """The check for a format a CRD may use (go-openapi drops '-': date-time is datetime), else None."""
    if not isinstance(fmt, str):
        return None
    return _FORMATS.get(fmt.replace("-", ""))


def compile_pattern(pattern: str):
    """A schema ``pattern``, compiled with RE2 — the regexp engine kube-apiserver uses (Go's
    regexp), so the same syntax is accepted and matching takes linear time whatever a hostile CRD
    and object combine (Python's backtracking ``re`` could be made to run for hours).
    Searched, not fully matched, as JSON Schema says. Raises ``PatternError``."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        message = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(message) from None


class Pattern:
    """A compiled schema pattern that remembers the strings it matched: quantities, names and
    enumerations-by-regex repeat across objects, and each RE2 call costs microseconds through the
    binding. At most ``MEMO_SIZE`` strings, forgotten all at once when full."""

    MEMO_SIZE = 4096
    __slots__ = ("regexp", "_matched")

    def __init__(self, regexp) -> None:
        self.regexp = regexp
        self._matched: set[str] = set()

    def matches(self, value: str) -> bool:
        """Whether ``value`` contains a match (JSON Schema's ``pattern`` is a search)."""
        if value in self._matched:
            return True
        if self.regexp.search(value) is None:
            return False
        if len(self._matched) >= self.MEMO_SIZE:
            self._matched.clear()
        self._matched.add(value)
        return True


def compile_schema_pattern(pattern: str) -> Pattern:
    """:func:`compile_pattern`, wrapped for validating many values."""
    return Pattern(compile_pattern(pattern))


class PatternError(ValueError):
    """A pattern RE2 (and so kube-apiserver) cannot compile."""


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
