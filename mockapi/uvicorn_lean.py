"""uvicorn without its command line: the package imported without running its ``__init__``.

``import uvicorn`` runs ``uvicorn/__init__.py``, which imports ``uvicorn.main`` — the ``uvicorn``
command: click, the reload and multiprocess supervisors (watchfiles, multiprocessing, pickle) —
about half of what importing uvicorn costs a start (docs/startup.md). mockapi runs uvicorn's
``Server`` with a ``Config`` it builds itself and never its command line, so :func:`install`
puts the package in ``sys.modules`` as Python would (same spec, file, ``__path__``) but with
its ``__init__`` deferred: ``uvicorn.Config`` and ``uvicorn.Server`` import just their modules
(``uvicorn.config``, ``uvicorn.server``; the same classes ``uvicorn.main`` re-exports), submodules
import as usual, and any other attribute (``uvicorn.run``, ``uvicorn.main``, ``__version__``,
``__all__``) runs the real ``__init__`` first — so code of the same process that uses uvicorn
afterwards sees the package it would have seen (tests/test_startup.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading

_LEAN = {"Config": "uvicorn.config", "Server": "uvicorn.server"}


def install() -> None:
    """Make ``import uvicorn`` lean, unless uvicorn is imported already (or cannot be found)."""
    if "uvicorn" in sys.modules:
        return
    spec = importlib.util.find_spec("uvicorn")
    if spec is None or spec.loader is None or not spec.submodule_search_locations:  # pragma: no cover - no uvicorn
        return
    module = importlib.util.module_from_spec(spec)
    lock = threading.RLock()

    def __getattr__(name: str):
        if name in _LEAN:
            return getattr(importlib.import_module(_LEAN[name]), name)
        with lock:
            if module.__dict__.get("__getattr__") is __getattr__:
                del module.__getattr__
                spec.loader.exec_module(module)  # the real __init__: uvicorn.main and the rest
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module 'uvicorn' has no attribute {name!r}") from None

    module.__getattr__ = __getattr__
    sys.modules.setdefault("uvicorn", module)
