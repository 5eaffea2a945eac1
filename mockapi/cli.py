"""The ``mockapi`` command line: ``serve`` runs the server, ``crds`` writes or checks schemas/."""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
import time
from pathlib import Path

from mockapi.settings import DEFAULT_PORT, Settings

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mockapi", description="A small, real Kubernetes API server for device management.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the API server")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 in a container)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free port and prints it)")
    serve.add_argument("--load", action="append", type=Path, default=[], metavar="PATH", help="file or directory of manifests to apply at start-up (repeatable)")
    serve.add_argument("--log-level", choices=LOG_LEVELS, default="info")
    serve.add_argument("--watch-history", type=int, default=Settings.history_size, metavar="N", help="watch events kept for resumes (default %(default)s)")
    serve.add_argument("--max-body", type=int, default=Settings.max_body, metavar="BYTES", help="largest request body accepted (default %(default)s)")

    crds = commands.add_parser("crds", help="write the CRDs of our kinds (schemas/) from the models, or check them")
    crds.add_argument("--out", type=Path, default=Path("schemas"), help="directory (default schemas/)")
    crds.add_argument("--check", action="store_true", help="exit 1 if the files differ from the models")

    args = parser.parse_args(argv)
    if args.command == "serve":
        settings = Settings(
            host=args.host, port=args.port, load=list(args.load), log_level=args.log_level, history_size=args.watch_history, max_body=args.max_body
        )
        return serve_forever(settings)
    return write_crds(args.out, check=args.check)


def write_crds(directory: Path, *, check: bool) -> int:
    from mockapi.models import crdgen

    if check:
        drifted = crdgen.drift(directory)
        for name in drifted:
            print(f"{directory / name}: out of date (run `mockapi crds`)", file=sys.stderr)
        return 1 if drifted else 0
    for path in crdgen.write(directory):
        print(path)
    return 0


def serve_forever(settings: Settings) -> int:
    import uvicorn

    from mockapi import app as app_
    from mockapi.loader import LoadError

    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.monotonic()
    sock = socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        print(f"mockapi: cannot listen on {settings.host}:{settings.port}: {exc.strerror}", file=sys.stderr)
        return 2
    settings.port = sock.getsockname()[1]
    try:
        server = app_.build(settings)
    except LoadError as exc:
        print(f"mockapi: {exc}", file=sys.stderr)
        return 1
    config = uvicorn.Config(
        server.app,
        log_level=settings.log_level,
        access_log=False,
        loop="auto",
        http="auto",
        lifespan="on",
        timeout_graceful_shutdown=1,
    )
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    loaded = server.loaded.total
    print(f"mockapi serving on http://{host}:{settings.port} ({loaded} objects loaded in {time.monotonic() - started:.2f}s)", flush=True)
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
