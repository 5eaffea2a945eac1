"""mockapi as a test fixture: :class:`MockAPIServer` (a real server in a thread), :func:`connect`
(a handle on a running one) and the pytest plugin in :mod:`mockapi.testing.plugin`.

Imported lazily, so loading the pytest plugin costs nothing until a fixture is used.
"""

__all__ = ["MockAPI", "MockAPIServer", "connect"]


def __getattr__(name: str):
    if name in __all__:
        from mockapi.testing import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
