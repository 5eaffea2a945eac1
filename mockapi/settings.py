"""Server settings: one value, built by the CLI (or a test) and passed to the composition root."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mockapi.http.bodies import DEFAULT_MAX_BODY
from mockapi.store.memory import DEFAULT_HISTORY, DEFAULT_WATCHER_BUFFER

DEFAULT_PORT = 55441


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    load: list[Path] = field(default_factory=list)
    log_level: str = "info"
    history_size: int = DEFAULT_HISTORY
    watcher_buffer: int = DEFAULT_WATCHER_BUFFER
    max_body: int = DEFAULT_MAX_BODY
    bookmark_interval: float = 60.0
    min_request_timeout: float = 1800.0
