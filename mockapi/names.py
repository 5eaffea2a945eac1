"""Kubernetes names, label keys and label values, checked and worded as apimachinery words them.

One module for ObjectMeta validation (``schema/meta.py``) and label selector parsing (``selectors.py``)
alike. Anchors: apimachinery ``pkg/util/validation/validation.go`` (IsDNS1123Subdomain, IsDNS1123Label,
IsDNS1035Label, IsQualifiedName, IsValidLabelValue, RegexError, MaxLenError) and
``pkg/api/validate/content`` (label keys). Lengths are counted in bytes, as Go's ``len`` does.
"""

from __future__ import annotations

import re

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"

_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT)
_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def max_len_error(length: int) -> str:
    """validation.MaxLenError."""
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError, double space after each example comma included."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


_MEMO_SIZE = 4096  # values remembered as valid per check; forgotten all at once when full


def _remember_valid(check):
    """Remember the values ``check`` found valid: label keys, label values and names repeat across
    objects, so most writes find every one of theirs known. Only valid values are kept (an invalid
    one is rare and its messages vary with the keyword arguments), only strings, at most _MEMO_SIZE."""
    valid: set[str] = set()

    def checked(value: str, **kwargs) -> list[str]:
        if type(value) is str and value in valid:
            return []
        errs = check(value, **kwargs)
        if not errs and type(value) is str:
            if len(valid) >= _MEMO_SIZE:
                valid.clear()
            valid.add(value)
        return errs

    checked.__name__, checked.__qualname__, checked.__doc__ = check.__name__, check.__qualname__, check.__doc__
    checked.__wrapped__ = check
    return checked


def byte_len(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes (a lone surrogate counted, never raising)."""
    return len(value.encode("utf-8", "surrogatepass"))


@_remember_valid
def dns1123_subdomain_errors(value: str) -> list[str]:
    """validation.IsDNS1123Subdomain."""
    errs = []
    if byte_len(value) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_remember_valid
def dns1123_label_errors(value: str) -> list[str]:
    """validation.IsDNS1123Label."""
    errs = []
    if byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    """validation.IsDNS1035Label (CRD plural, singular, version and short names)."""
    errs = []
    if byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1035_LABEL.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


@_remember_valid
def qualified_name_errors(value: str, *, noun: str = "a qualified name") -> list[str]:
    """validation.IsQualifiedName: optional DNS subdomain prefix, '/', a name of at most 63.

    ``noun`` opens the message for a value with more than one '/': "a qualified name" in
    util/validation (what label selectors report), "a valid label key" in validate/content
    (what ObjectMeta's labels, annotations and finalizers report)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            f"{noun} "
            + _qualified_name_regex_error()
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + msg for msg in dns1123_subdomain_errors(prefix))
    name = parts[-1]
    if not name:
        errs.append("name part must be non-empty")
    elif byte_len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QUALIFIED_NAME.fullmatch(name):
        errs.append("name part " + _qualified_name_regex_error())
    return errs


def _qualified_name_regex_error() -> str:
    return regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")


def label_key_errors(value: str) -> list[str]:
    """content.IsLabelKey: a qualified name, named a label key."""
    return qualified_name_errors(value, noun="a valid label key")


@_remember_valid
def label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue."""
    errs = []
    if byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
