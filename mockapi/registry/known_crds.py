"""Our own CRDs, validated once by a test rather than at every start.

Every server seeds the six devmgmtproto.k8s.io CRDs (:func:`mockapi.app.seed`), and validating a
CRD (``mockapi.schema.crd``: names, versions, the structural-schema rules) is most of the seed's
time, plus importing its rules (issue 9: ``MockAPIServer`` ready < 0.1 s). They are ours and
fixed, so their validation's outcome is known: ``known_crds.json`` lists a digest of each as the
CRD strategy sees it on create (pruned and defaulted; its ``uid`` and ``creationTimestamp``, which
the server has just set, left out), and a CRD whose digest is listed is taken as valid without
running the rules. Any other CRD — ours with one byte changed included — is validated as always.

``tests/test_startup.py`` recomputes the digests with every rule run
(:func:`mockapi.app.known_crd_digests`: an invalid CRD fails the seed) and fails until the file
matches: after changing the models or anything that prunes or defaults a CRD, rewrite it with
``python3 -c 'from mockapi import app; app.write_known_crds()'``. Until then a changed CRD is
merely validated at start-up again, as before.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from pathlib import Path
from typing import Iterator

import orjson

PATH = Path(__file__).with_name("known_crds.json")
_SET_BY_THE_SERVER = ("uid", "creationTimestamp")  # on every create, before validation: always valid

_recording: list[str] | None = None  # recording(): every digest seen, none taken as known


def digest(crd: dict) -> str | None:
    """The digest of a CRD as the strategy validates it on create, or None if it has none."""
    try:
        meta = {k: v for k, v in crd["metadata"].items() if k not in _SET_BY_THE_SERVER}
        return hashlib.sha256(orjson.dumps({**crd, "metadata": meta}, option=orjson.OPT_SORT_KEYS)).hexdigest()
    except (KeyError, TypeError, AttributeError, orjson.JSONEncodeError):
        return None


@functools.cache
def _known() -> frozenset[str]:
    try:
        return frozenset(json.loads(PATH.read_text()))
    except (OSError, ValueError):
        return frozenset()


def known_valid(crd: dict) -> bool:
    """Whether this CRD, being created, is one of ours whose validation a test has run."""
    found = digest(crd)
    if _recording is not None:
        if found is not None:
            _recording.append(found)
        return False
    return found is not None and found in _known()


@contextlib.contextmanager
def recording() -> Iterator[list[str]]:
    """Meanwhile every CRD being created is validated by every rule (none is taken as known) and
    its digest is appended to the list given (:func:`mockapi.app.known_crd_digests`)."""
    global _recording
    _recording = []
    try:
        yield _recording
    finally:
        _recording = None


def write(digests: list[str]) -> None:
    PATH.write_text(json.dumps(sorted(digests), indent=1) + "\n")
