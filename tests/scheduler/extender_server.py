"""A real HTTP(S) extender for tests: ``http.server`` on a free port in a thread, each verb answered
by a Python function of the decoded request body, every request remembered; and a self-signed CA
with a server certificate for 127.0.0.1 (the ``openssl`` CLI)."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

Handler = Callable[[dict], object]  # body → reply (200), or (status code, reply)


class ExtenderServer:
    def __init__(self, handlers: dict[str, Handler], *, tls: ssl.SSLContext | None = None, delay: float = 0.0, prefix: str = "/scheduler") -> None:
        self.handlers = handlers
        self.delay = delay
        self.prefix = prefix
        self.requests: list[tuple[str, dict]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._server.server_address[1]}{self.prefix}"

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.requests]

    def __enter__(self) -> "ExtenderServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
                verb = self.path[len(outer.prefix) + 1 :] if self.path.startswith(outer.prefix + "/") else self.path
                outer.requests.append((verb, body))
                if outer.delay:
                    time.sleep(outer.delay)
                handler = outer.handlers.get(verb)
                code, reply = (404, {"Error": "no such verb"}) if handler is None else _split(handler(body))
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:
                    pass  # the scheduler gave up waiting (timeout tests)

            def log_message(self, *args) -> None:
                pass

        return Handler


def _split(reply) -> tuple[int, object]:
    if isinstance(reply, tuple):
        return reply
    return 200, reply


def node_names(body: dict) -> list[str]:
    """The candidate nodes of an ExtenderArgs, in either mode."""
    if body.get("NodeNames") is not None:
        return list(body["NodeNames"])
    return [item["metadata"]["name"] for item in body["Nodes"]["items"]]


# ------------------------------------------------------------------------------ certificates
def make_ca(folder: Path, *, name: str = "test-ca") -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 / localhost it signed: PEM files in ``folder``,
    made by the ``openssl`` CLI (on the machine and in CI's Debian image)."""
    paths = {part: folder / f"{name}-{part}.pem" for part in ("ca", "ca-key", "cert", "key", "csr", "ext")}
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", paths["ca-key"], "-out", paths["ca"], "-days", "1", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    _openssl("req", *ec, "-keyout", paths["key"], "-out", paths["csr"], "-subj", "/CN=extender")
    paths["ext"].write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nauthorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n"
    )
    _openssl("x509", "-req", "-in", paths["csr"], "-CA", paths["ca"], "-CAkey", paths["ca-key"], "-CAcreateserial",
             "-out", paths["cert"], "-days", "1", "-extfile", paths["ext"])  # fmt: skip
    return paths


def _openssl(*args) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=30)


def server_context(paths: dict[str, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(paths["cert"], paths["key"])
    return context
