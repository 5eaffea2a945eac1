"""What every example scenario needs: the clients, its own namespace, waiting with a deadline,
printing what happens, and cleaning up.

A scenario is a function of a :class:`Scenario`, run by :func:`run`, in the shape of
mini-kube-scheduler's scenarios (create nodes and pods with a client library, watch where the pods
go, log each step). It talks to the server in ``--kubeconfig`` (default: the repository's
``kubeconfig``, which points at ``mockapi serve``'s default port) with the official ``kubernetes``
client: the typed ``CoreV1Api`` for Nodes and plain pods, and ``DynamicClient`` (dicts) for pods
with ``spec.deviceClaims`` and the ``devmgmtproto.k8s.io`` kinds — the typed models know neither.

Everything a scenario creates carries the label ``examples.mockapi.k8s.io/scenario: <name>`` and
its namespaced objects live in the namespace ``example-<name>``: cleaning up (before the run, for
an interrupted earlier one, and after it) deletes the namespace and the labelled cluster-scoped
objects. The exit code is 0 when the scenario happened as described, 1 when it did not (the line
starting ``FAILED:`` says which step).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, TypeVar

import urllib3
from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException

ROOT = Path(__file__).resolve().parents[1]
LABEL = "examples.mockapi.k8s.io/scenario"
DEVICES = "devmgmtproto.k8s.io/v1alpha1"
CLUSTER_KINDS = (("v1", "Node"), (DEVICES, "DevicePool"), (DEVICES, "DeviceClass"), ("scheduling.k8s.io/v1", "PriorityClass"))
T = TypeVar("T")


class Failed(Exception):
    """The scenario did not happen as described."""


class Scenario:
    def __init__(self, name: str, api: client.ApiClient, *, timeout: float) -> None:
        self.name = name
        self.namespace = f"example-{name}"
        self.labels = {LABEL: name}
        self.timeout = timeout
        self.api = api
        self.core = client.CoreV1Api(api)
        self.dynamic = dynamic.DynamicClient(api)

    # ------------------------------------------------------------ telling the story
    def say(self, text: str) -> None:
        print(f"scenario: {text}", flush=True)

    def check(self, condition: bool, what: str) -> None:
        if not condition:
            raise Failed(what)

    def wait_for(self, what: Callable[[], T], description: str, *, timeout: float | None = None) -> T:
        """Poll ``what`` until it returns something true; Failed after the timeout."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            found = what()
            if found:
                return found
            if time.monotonic() > deadline:
                raise Failed(f"timed out after {timeout or self.timeout:g} s waiting for {description}")
            time.sleep(0.02)

    # ------------------------------------------------------------ objects
    def resource(self, kind: str, api_version: str = DEVICES):
        return self.dynamic.resources.get(api_version=api_version, kind=kind)

    def meta(self, name: str, **extra) -> dict:
        return {"name": name, "labels": dict(self.labels), **extra}

    def pod(self, name: str) -> dict:
        """A pod as a dict (``spec.deviceClaims``, ``status.deviceClaimStatuses`` included)."""
        return self.resource("Pod", "v1").get(name=name, namespace=self.namespace).to_dict()

    def pods(self) -> dict[str, dict]:
        items = self.resource("Pod", "v1").get(namespace=self.namespace).to_dict()["items"]
        return {p["metadata"]["name"]: p for p in items}

    def claims(self) -> dict[str, dict]:
        items = self.resource("DeviceClaim").get(namespace=self.namespace).to_dict()["items"]
        return {c["metadata"]["name"]: c for c in items}

    def events(self, name: str) -> list[tuple[str, str]]:
        """(reason, message) of the Events about the object ``name`` in our namespace, oldest first."""
        items = self.core.list_namespaced_event(self.namespace, field_selector=f"involvedObject.name={name}").items
        return [(e.reason, e.message) for e in items]

    def scheduling_message(self, name: str, reason: str) -> str:
        """The message of the pod's PodScheduled=False condition, once the scheduler has written
        one that says ``reason`` (an earlier attempt may have had another)."""
        seen = []

        def unschedulable():
            for condition in (self.pod(name).get("status") or {}).get("conditions") or []:
                if condition["type"] == "PodScheduled" and condition["status"] == "False":
                    seen.append(condition["message"])
                    return condition["message"] if reason in condition["message"] else None
            return None

        try:
            return self.wait_for(unschedulable, f"the scheduler to say why {name} is Pending")
        except Failed:
            raise Failed(f"{name} is not Pending for {reason!r}: {seen[-1]!r}" if seen else f"the scheduler did not say why {name} is Pending") from None

    def wait_running(self, name: str) -> dict:
        return self.wait_for(lambda: _running(self.pod(name)), f"{name} to be Running")

    # ------------------------------------------------------------ set-up and clean-up
    def set_up(self) -> None:
        self.clean_up()
        self.wait_for(lambda: not self._namespace_exists(), f"namespace {self.namespace} from an earlier run to go")
        self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=self.namespace, labels=self.labels)))

    def clean_up(self) -> None:
        selector = f"{LABEL}={self.name}"
        for api_version, kind in CLUSTER_KINDS:
            self.resource(kind, api_version).delete(label_selector=selector)
        try:
            self.core.delete_namespace(self.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def _namespace_exists(self) -> bool:
        try:
            self.core.read_namespace(self.namespace)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise


def _running(pod: dict) -> dict | None:
    return pod if (pod.get("status") or {}).get("phase") == "Running" else None


def run(name: str, scenario: Callable[[Scenario], None], description: str) -> int:
    """Parse the command line, run ``scenario`` in a fresh namespace, clean up; the exit code."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--kubeconfig", default=str(ROOT / "kubeconfig"), help="the server (default: the repository's kubeconfig)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each step (default 5)")
    args = parser.parse_args()
    try:
        api = config.new_client_from_config(config_file=args.kubeconfig)
    except (OSError, config.ConfigException) as exc:
        print(f"{name}: cannot read the kubeconfig {args.kubeconfig}: {exc}", file=sys.stderr)
        return 1
    try:
        session = Scenario(name, api, timeout=args.timeout)  # DynamicClient reads discovery here
        session.set_up()
    except (urllib3.exceptions.HTTPError, ApiException, Failed) as exc:
        print(f"{name}: cannot set up at {api.configuration.host}: {_reason(exc)}", file=sys.stderr)
        api.close()
        return 1
    try:
        scenario(session)
    except Failed as exc:
        print(f"FAILED: {exc}", flush=True)
        return 1
    except ApiException as exc:
        print(f"FAILED: the server refused a request: {_reason(exc)}", flush=True)
        return 1
    finally:
        session.clean_up()
        api.close()
    print("scenario: done", flush=True)
    return 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, ApiException):
        return f"{exc.status} {exc.reason}: {exc.body}"
    if isinstance(exc, urllib3.exceptions.MaxRetryError):
        return str(exc.reason)
    return str(exc)
