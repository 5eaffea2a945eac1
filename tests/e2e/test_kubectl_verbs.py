"""Issue 5's everyday kubectl verbs, driven with the real kubectl against a fresh server per test.

Each test starts from a cold discovery cache (``--cache-dir`` in the test's temporary directory)
and asserts on kubectl's exit code and output, as a user reads them. Set-up that is not the point
of a test goes through the server's own loader (``live.mockapi.load``) to keep the file fast.
Parallel actors (the client that removes a finalizer, the one that deletes another object) start
once kubectl's watch is open, which the server's watcher count tells exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"
GROUP = "devmgmtproto.k8s.io"
OUR_RESOURCES = {"deviceclaims", "deviceclaimtemplates", "deviceclasses", "devicedrivers", "devicepools", "deviceprivilegedclaims"}
pytestmark = pytest.mark.e2e


class Kubectl:
    """``kubectl --kubeconfig <live> --cache-dir <tmp>``: run to completion, or start in the background."""

    def __init__(self, live, cache: Path) -> None:
        binary = shutil.which("kubectl")
        assert binary, "kubectl must be on PATH: the end-to-end suite drives the real client"
        self.live = live
        self.prefix = [binary, "--kubeconfig", str(live.kubeconfig), "--cache-dir", str(cache)]

    def __call__(self, *args: str, check: bool = True, env: dict | None = None):
        result = subprocess.run(
            [*self.prefix, *args], capture_output=True, text=True, timeout=60, env=_environment(env)
        )
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([*self.prefix, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def start_watching(self, *args: str) -> subprocess.Popen:
        """Start a command and return once it has opened one more watch on the server."""
        before = self.live.server.store.watcher_count()
        process = self.start(*args)
        deadline = time.monotonic() + 60  # a hang guard: a loaded machine takes seconds, never this
        while self.live.server.store.watcher_count() <= before:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "kubectl never opened its watch"
            time.sleep(0.02)
        return process


def _environment(extra: dict | None) -> dict | None:
    return None if extra is None else {**os.environ, **extra}


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    stdout, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def still_waiting(process: subprocess.Popen, *, grace: float = 1.0) -> bool:
    """Whether a command is still running ``grace`` seconds on: one fooled by an event it was sent
    exits within milliseconds of it. (A slow machine can only make this miss a fooled command,
    never fail a correct one.)"""
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        return True
    return False


def stop_after_lines(process: subprocess.Popen, count: int, *, grace: float = 0.3, timeout: float = 60) -> list[str]:
    """The lines a running command printed once it printed ``count`` of them and then nothing more
    for ``grace`` seconds (so a duplicate printed late is still caught); the command is stopped."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline and reader.is_alive():
        time.sleep(0.02)
    time.sleep(grace)
    process.terminate()
    process.communicate(timeout=10)
    reader.join(5)
    return [line.rstrip("\n") for line in lines]


@pytest.fixture
def kubectl(live, tmp_path):
    return Kubectl(live, tmp_path / "cache")


@pytest.fixture
def write(tmp_path):
    """Write a manifest (YAML text or a list of documents) into the test's directory; returns its path."""

    def write_manifest(name: str, content) -> str:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else yaml.safe_dump_all(content))
        return str(path)

    return write_manifest


def claim(name: str, *, namespace: str = "default", count: int = 1, labels: dict | None = None, **metadata) -> dict:
    meta = {"name": name, "namespace": namespace, **metadata}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "DeviceClaim",
        "metadata": meta,
        "spec": {"claims": [{"deviceClass": "example.com-foozer-single", "limits": {"count": count}}]},
    }


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines()]


# -- server information -----------------------------------------------------------------------


def test_version_reports_a_1_32_server_without_a_skew_warning(kubectl):
    result = kubectl("version")
    assert "Server Version: v1.32." in result.stdout
    assert "WARNING" not in result.stdout + result.stderr
    server = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "32")


def test_health_endpoints_answer_like_kube_apiserver(kubectl):
    verbose = kubectl("get", "--raw", "/readyz?verbose").stdout.splitlines()
    assert verbose[-1] == "readyz check passed" and "[+]ping ok" in verbose
    assert all(line.startswith("[+]") and line.endswith(" ok") for line in verbose[:-1])
    excluded = kubectl("get", "--raw", "/livez?verbose&exclude=ping&exclude=etcd").stdout.splitlines()
    assert "[+]ping excluded: ok" in excluded
    assert 'warn: some health checks cannot be excluded: no matches for "etcd"' in excluded
    assert excluded[-1] == "livez check passed"
    for path in ("/healthz", "/livez", "/readyz", "/readyz/ping", "/healthz/ping"):
        assert kubectl("get", "--raw", path).stdout == "ok", path


def test_api_resources_list_our_kinds_with_short_names_and_categories(kubectl):
    table = rows(kubectl("api-resources", "-o", "wide").stdout)
    assert table[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"]
    by_name = {row[0]: row for row in table[1:]}
    verbs = "create,delete,deletecollection,get,list,patch,update,watch"
    assert by_name["deviceclaims"] == ["deviceclaims", "dclaim", f"{GROUP}/v1alpha1", "true", "DeviceClaim", verbs, "devmgmt"]
    assert by_name["deviceclasses"][1:5] == ["dcls", f"{GROUP}/v1alpha1", "false", "DeviceClass"]
    assert by_name["pods"][1:5] == ["po", "v1", "true", "Pod"] and by_name["pods"][-1] == "all"
    assert by_name["customresourcedefinitions"][1] == "crd,crds"
    ours = kubectl("api-resources", "--categories=devmgmt", "-o", "name").stdout.split()
    assert {name.split(".")[0] for name in ours} == OUR_RESOURCES
    cluster = kubectl("api-resources", f"--api-group={GROUP}", "--namespaced=false", "-o", "name").stdout.split()
    assert {name.split(".")[0] for name in cluster} == {"deviceclasses", "devicedrivers", "devicepools"}
    versions = kubectl("api-versions").stdout.split()
    assert versions == sorted(versions) and {"v1", f"{GROUP}/v1alpha1", "apiextensions.k8s.io/v1"} <= set(versions)


def test_explain_prints_nested_fields_of_our_kinds_and_the_pod_extensions(kubectl):
    limits = kubectl("explain", "deviceclaims.spec.claims.limits").stdout
    assert "KIND:       DeviceClaim" in limits and "FIELD: limits <map[string]" in limits
    assert "Limits allows the user to control the maximum count of devices" in limits
    condition = kubectl("explain", "dclaim.status.conditions.type").stdout
    assert "FIELD: type <string>" in condition and "type of condition in CamelCase" in condition
    recursive = kubectl("explain", "devicepools.spec", "--recursive").stdout
    assert "devices\t<[]Object> -required-" in recursive
    pod = kubectl("explain", "pods.spec.deviceClaims.claimName").stdout
    assert "FIELD: claimName <string>" in pod
    missing = kubectl("explain", "deviceclaims.spec.nope", check=False)
    assert missing.returncode == 1 and 'field "nope" does not exist' in missing.stderr


# -- apply ------------------------------------------------------------------------------------


def test_server_side_apply_creates_conflicts_forces_and_removes_dropped_fields(kubectl, write, live):
    live.mockapi.load(TESTDATA / "20-classes.yaml")
    first = write("first.yaml", [claim("ssa", labels={"a": "1", "b": "2"})])
    assert kubectl("apply", "--server-side", "-f", first).stdout == "deviceclaim.devmgmtproto.k8s.io/ssa serverside-applied\n"
    assert kubectl("apply", "--server-side", "-f", first).stdout.endswith(" serverside-applied\n")  # re-apply: no-op

    other = write("other.yaml", [claim("ssa", count=2)])
    conflict = kubectl("apply", "--server-side", "--field-manager=other", "-f", other, check=False)
    assert conflict.returncode == 1
    assert 'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.claims' in conflict.stderr
    assert "--force-conflicts" in conflict.stderr
    forced = kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other)
    assert forced.stdout.endswith(" serverside-applied\n")
    managed = json.loads(kubectl("get", "dclaim", "ssa", "-o", "json", "--show-managed-fields").stdout)["metadata"]["managedFields"]
    owners = {entry["manager"]: entry["fieldsV1"] for entry in managed}
    assert owners["other"]["f:spec"] == {"f:claims": {}} and "f:spec" not in owners["kubectl"]
    assert all(entry["operation"] == "Apply" for entry in managed)

    dropped = write("dropped.yaml", [claim("ssa", count=2, labels={"a": "1"})])  # co-owns the spec
    kubectl("apply", "--server-side", "-f", dropped)
    got = json.loads(kubectl("get", "dclaim", "ssa", "-o", "json").stdout)
    assert got["metadata"]["labels"] == {"a": "1"}, "a label no manager applies any more is removed"
    assert got["spec"]["claims"][0]["limits"]["count"] == 2


def test_server_side_apply_merges_the_items_two_managers_own_in_a_list_map(kubectl, write):
    kubectl("create", "-f", write("crd.yaml", [gadget_crd()]))
    kubectl("apply", "--server-side", "--field-manager=ma", "-f", write("a.yaml", [gadget(ports=[{"name": "a", "port": 1}], tags=["red"])]))
    kubectl("apply", "--server-side", "--field-manager=mb", "-f", write("b.yaml", [gadget(ports=[{"name": "b", "port": 2}], tags=["blue"])]))
    spec = json.loads(kubectl("get", "gadget", "g", "-o", "jsonpath={.spec}").stdout)
    assert spec == {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}], "tags": ["red", "blue"]}
    kubectl("apply", "--server-side", "--field-manager=ma", "-f", write("a2.yaml", [gadget(tags=["blue"])]))
    spec = json.loads(kubectl("get", "gadget", "g", "-o", "jsonpath={.spec}").stdout)
    assert spec == {"ports": [{"name": "b", "port": 2}], "tags": ["blue"]}, "ma's item goes, mb's stays"


def gadget_crd() -> dict:
    ports = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
    }
    tags = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"ports": ports, "tags": tags}}}}
    return crd("gadgets", "Gadget", schema)


def gadget(**spec) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec}


def crd(plural: str, kind: str, schema: dict, **names) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), **names},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


def test_apply_dry_run_server_changes_nothing(kubectl, write, live):
    live.mockapi.load(write("live.yaml", [claim("kept", labels={"a": "1"})]))
    before = kubectl("get", "dclaim", "kept", "-o", "json").stdout
    changed = write("changed.yaml", [claim("kept", count=5, labels={"a": "2"}), claim("new")])
    client = kubectl("apply", "--dry-run=server", "-f", changed).stdout.splitlines()
    assert client == [
        "deviceclaim.devmgmtproto.k8s.io/kept configured (server dry run)",
        "deviceclaim.devmgmtproto.k8s.io/new created (server dry run)",
    ]
    server = kubectl("apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", changed).stdout.splitlines()
    assert all(line.endswith(" serverside-applied (server dry run)") for line in server) and len(server) == 2
    assert kubectl("get", "dclaim", "kept", "-o", "json").stdout == before
    missing = kubectl("get", "dclaim", "new", check=False)
    assert missing.returncode == 1 and 'deviceclaims.devmgmtproto.k8s.io "new" not found' in missing.stderr


def test_a_changed_prototype_pod_is_reapplied_client_side(kubectl, write):
    # G10: our Pod schema declares the prototype's fields, so kubectl can compute a strategic patch.
    pod = next(doc for doc in yaml.safe_load_all((TESTDATA / "60-pods.yaml").read_text()) if doc)
    path = write("pod.yaml", [pod])
    assert kubectl("apply", "-f", path).stdout.endswith(" created\n")
    assert kubectl("apply", "-f", path).stdout.endswith(" unchanged\n")
    container = pod["spec"]["containers"][0]
    container["image"] = "registry.k8s.io/pause:3.9"  # an image may change
    path = write("pod.yaml", [pod])
    assert kubectl("apply", "-f", path).stdout == f"pod/{pod['metadata']['name']} configured\n"
    got = json.loads(kubectl("get", "pod", pod["metadata"]["name"], "-o", "json").stdout)["spec"]
    assert got["containers"][0]["image"] == "registry.k8s.io/pause:3.9"
    assert got["containers"][0]["devices"] == [{"name": "foozer-gpu"}]
    assert kubectl("diff", "-f", path).stdout == ""
    # the device claims may not: a pod's spec is immutable but for what kube lets change
    container["devices"].append({"name": "nic"})
    pod["spec"]["deviceClaims"].append({"name": "nic", "claimName": "some-nic-claim"})
    refused = kubectl("apply", "-f", write("pod.yaml", [pod]), check=False)
    assert refused.returncode == 1
    assert "Forbidden: pod updates may not change fields other than `spec.containers[*].image`" in refused.stderr
    assert "this update changes spec.containers, spec.deviceClaims" in refused.stderr


# -- writes -----------------------------------------------------------------------------------


def test_replace_puts_the_whole_object_and_a_stale_copy_conflicts(kubectl, write, live):
    live.mockapi.load(write("live.yaml", [claim("r", labels={"a": "1"})]))
    stale = json.loads(kubectl("get", "dclaim", "r", "-o", "json").stdout)
    replaced = write("replaced.yaml", [claim("r", count=3)])
    assert kubectl("replace", "-f", replaced).stdout == "deviceclaim.devmgmtproto.k8s.io/r replaced\n"
    got = json.loads(kubectl("get", "dclaim", "r", "-o", "json").stdout)
    assert got["spec"]["claims"][0]["limits"]["count"] == 3 and got["metadata"]["generation"] == 2
    assert "labels" not in got["metadata"], "replace is not a merge"
    conflict = kubectl("replace", "-f", write("stale.json", json.dumps(stale)), check=False)
    assert conflict.returncode == 1
    assert (
        'Error from server (Conflict): error when replacing "' in conflict.stderr
        and 'Operation cannot be fulfilled on deviceclaims.devmgmtproto.k8s.io "r": the object has been modified; '
        "please apply your changes to the latest version and try again" in conflict.stderr
    )


def test_edit_sends_what_the_editor_changed(kubectl, write, live, tmp_path):
    live.mockapi.load(write("live.yaml", [claim("e")]))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/count: 1/count: 4/' \"$1\"\n")
    editor.chmod(0o755)
    edited = kubectl("edit", "dclaim", "e", env={"EDITOR": str(editor), "KUBE_EDITOR": str(editor)})
    assert edited.stdout == "deviceclaim.devmgmtproto.k8s.io/e edited\n"
    assert kubectl("get", "dclaim", "e", "-o", "jsonpath={.spec.claims[0].limits.count} {.metadata.generation}").stdout == "4 2"
    unchanged = kubectl("edit", "dclaim", "e", env={"EDITOR": "true", "KUBE_EDITOR": "true"})
    assert "Edit cancelled, no changes made." in unchanged.stdout + unchanged.stderr


def test_label_and_annotate_refuse_to_overwrite_without_the_flag(kubectl, write, live):
    live.mockapi.load(write("live.yaml", [claim("l", labels={"a": "1"})]))
    assert kubectl("annotate", "dclaim", "l", "note=hello").stdout == "deviceclaim.devmgmtproto.k8s.io/l annotated\n"
    refused = kubectl("label", "dclaim", "l", "a=2", check=False)
    assert refused.returncode == 1 and "error: 'a' already has a value (1), and --overwrite is false" in refused.stderr
    assert kubectl("label", "dclaim", "l", "a=2", "--overwrite").stdout == "deviceclaim.devmgmtproto.k8s.io/l labeled\n"
    again = kubectl("annotate", "dclaim", "l", "note=bye", check=False)
    assert again.returncode == 1 and "'note' already has a value (hello)" in again.stderr
    kubectl("annotate", "dclaim", "l", "note=bye", "--overwrite")
    meta = json.loads(kubectl("get", "dclaim", "l", "-o", "json").stdout)["metadata"]
    assert meta["labels"] == {"a": "2"} and meta["annotations"] == {"note": "bye"}
    assert kubectl("label", "dclaim", "l", "a-").stdout == "deviceclaim.devmgmtproto.k8s.io/l unlabeled\n"
    assert "labels" not in json.loads(kubectl("get", "dclaim", "l", "-o", "json").stdout)["metadata"]


# -- delete -----------------------------------------------------------------------------------


def test_delete_by_label_and_all_delete_exactly_those(kubectl, write, live):
    claims = [claim("x1", labels={"grp": "one"}), claim("x2", labels={"grp": "one"}), claim("x3"), claim("y", namespace="team-a")]
    live.mockapi.load([TESTDATA / "00-namespaces.yaml", write("claims.yaml", claims)])
    by_label = kubectl("delete", "dclaim", "-l", "grp=one").stdout.splitlines()
    assert by_label == ['deviceclaim.devmgmtproto.k8s.io "x1" deleted', 'deviceclaim.devmgmtproto.k8s.io "x2" deleted']
    assert kubectl("get", "dclaim", "-o", "name").stdout == "deviceclaim.devmgmtproto.k8s.io/x3\n"
    assert kubectl("delete", "dclaim", "--all").stdout == 'deviceclaim.devmgmtproto.k8s.io "x3" deleted\n'
    empty = kubectl("get", "dclaim")
    assert empty.stdout == "" and "No resources found in default namespace." in empty.stderr
    assert kubectl("get", "dclaim", "-n", "team-a", "-o", "name").stdout == "deviceclaim.devmgmtproto.k8s.io/y\n"


def test_delete_waits_until_another_client_removes_the_finalizer(kubectl, write, live):
    live.mockapi.load(write("live.yaml", [claim("fin", finalizers=["example.com/hold"])]))
    deleting = kubectl.start_watching("delete", "dclaim", "fin", "--timeout=60s")
    assert deleting.poll() is None, "kubectl delete returned while a finalizer held the object"
    held = json.loads(kubectl("get", "dclaim", "fin", "-o", "json").stdout)["metadata"]
    assert "deletionTimestamp" in held and held["finalizers"] == ["example.com/hold"]
    kubectl("patch", "dclaim", "fin", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    done = finish(deleting)
    assert done.returncode == 0 and done.stdout == 'deviceclaim.devmgmtproto.k8s.io "fin" deleted\n', done.stderr
    assert kubectl("get", "dclaim", "fin", check=False).returncode == 1


def test_deleting_a_namespace_waits_for_finalized_content(kubectl, write, live):
    content = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scratch"}},
        claim("held", namespace="scratch", finalizers=["example.com/hold"]),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "scratch"}, "data": {"a": "b"}},
    ]
    live.mockapi.load(write("ns.yaml", content))
    deleting = kubectl.start_watching("delete", "namespace", "scratch", "--timeout=60s")
    assert rows(kubectl("get", "namespace", "scratch").stdout)[1][:2] == ["scratch", "Terminating"]
    assert kubectl("get", "configmaps", "-n", "scratch", "-o", "name").stdout == ""
    kubectl("patch", "dclaim", "held", "-n", "scratch", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    done = finish(deleting)
    assert done.returncode == 0 and done.stdout == 'namespace "scratch" deleted\n', done.stderr
    gone = kubectl("get", "namespace", "scratch", check=False)
    assert gone.returncode == 1 and 'namespaces "scratch" not found' in gone.stderr


# -- describe and wait ------------------------------------------------------------------------


def test_describe_shows_the_events_about_the_object(kubectl, write, live):
    live.mockapi.load([TESTDATA / "10-drivers.yaml", TESTDATA / "20-classes.yaml", write("claims.yaml", [claim("d"), claim("other")])])
    uid, other_uid = kubectl("get", "dclaim", "d", "other", "-o", "jsonpath={.items[*].metadata.uid}").stdout.split()
    class_uid = kubectl("get", "deviceclass", "example.com-foozer-single", "-o", "jsonpath={.metadata.uid}").stdout
    kubectl("create", "-f", write("events.yaml", [
        event("d.1", "DeviceClaim", "d", uid, reason="Allocated", message="allocated one foozer", namespace="default"),
        event("other.1", "DeviceClaim", "other", other_uid, reason="Pending", message="about another claim", namespace="default"),
        event("class.1", "DeviceClass", "example.com-foozer-single", class_uid, reason="Checked", message="class looks fine", kind_type="Warning"),
    ]))  # fmt: skip
    described = kubectl("describe", "dclaim", "d").stdout
    assert described.startswith("Name:         d\nNamespace:    default\n")
    events = described.split("Events:\n", 1)[1].splitlines()
    assert events[0].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert events[2].split()[:2] == ["Normal", "Allocated"] and events[2].endswith("allocator  allocated one foozer")
    assert len(events) == 3, "only the event about this claim"
    cluster_scoped = kubectl("describe", "deviceclass", "example.com-foozer-single").stdout
    assert "Warning  Checked" in cluster_scoped and "class looks fine" in cluster_scoped
    other = kubectl("describe", "dclaim", "other").stdout.split("Events:\n", 1)[1]
    assert "about another claim" in other and "allocated one foozer" not in other


def event(name: str, kind: str, object_name: str, uid: str, *, reason: str, message: str,
          namespace: str = "", kind_type: str = "Normal") -> dict:  # fmt: skip
    involved = {"apiVersion": f"{GROUP}/v1alpha1", "kind": kind, "name": object_name}
    if namespace:
        involved["namespace"] = namespace
    if uid:
        involved["uid"] = uid
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": kind_type,
        "source": {"component": "allocator"},
        "count": 1,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
    }


ALLOCATED = json.dumps(
    {"status": {"conditions": [{"type": "Allocated", "status": "True", "reason": "Done", "message": "ok",
                                "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}  # fmt: skip
)


# kubectl wait's --timeout runs from before its discovery and GET: a wait that must reach its
# condition gets a timeout no loaded machine nears; one that must time out gets a warm discovery
# cache and a few seconds (kubectl says "timed out waiting" only when its watch was open by then).
def test_wait_for_a_condition_is_not_fooled_by_another_object(kubectl, write, live):
    live.mockapi.load(write("claims.yaml", [claim("mine"), claim("theirs")]))
    waiting = kubectl.start_watching("wait", "dclaim/mine", "--for=condition=Allocated", "--timeout=60s")
    kubectl("patch", "dclaim", "theirs", "--subresource=status", "--type=merge", "-p", ALLOCATED)
    assert still_waiting(waiting), finish(waiting)
    kubectl("patch", "dclaim", "mine", "--subresource=status", "--type=merge", "-p", ALLOCATED)
    met = finish(waiting)
    assert met.returncode == 0 and met.stdout == "deviceclaim.devmgmtproto.k8s.io/mine condition met\n"


def test_wait_for_a_jsonpath_value(kubectl, write, live):
    live.mockapi.load(write("claims.yaml", [claim("mine"), claim("theirs")]))
    kubectl("patch", "dclaim", "theirs", "--subresource=status", "--type=merge", "-p", ALLOCATED)
    jsonpath = "--for=jsonpath={.status.conditions[0].reason}=Done"
    timed_out = kubectl("wait", "dclaim/mine", jsonpath, "--timeout=3s", check=False)
    assert timed_out.returncode == 1 and "timed out waiting for the condition on deviceclaims/mine" in timed_out.stderr, timed_out.stderr
    kubectl("patch", "dclaim", "mine", "--subresource=status", "--type=merge", "-p", ALLOCATED)
    assert kubectl("wait", "dclaim/mine", jsonpath, "--timeout=60s").stdout == "deviceclaim.devmgmtproto.k8s.io/mine condition met\n"


def test_wait_for_delete_is_not_fooled_by_another_object(kubectl, write, live):
    live.mockapi.load(write("claims.yaml", [claim("mine"), claim("theirs")]))
    waiting = kubectl.start_watching("wait", "dclaim/mine", "--for=delete", "--timeout=60s")
    kubectl("delete", "dclaim", "theirs")
    assert still_waiting(waiting), finish(waiting)
    kubectl("delete", "dclaim", "mine")
    met = finish(waiting)
    assert met.returncode == 0 and met.stdout == "deviceclaim.devmgmtproto.k8s.io/mine condition met\n"


# -- get --------------------------------------------------------------------------------------


def test_get_prints_every_output_format(kubectl, write, live):
    live.mockapi.load(write("claims.yaml", [claim("a", labels={"tier": "gold"}), claim("b", count=2)]))
    as_yaml = yaml.safe_load(kubectl("get", "dclaim", "a", "-o", "yaml").stdout)
    assert (as_yaml["apiVersion"], as_yaml["kind"], as_yaml["metadata"]["name"]) == (f"{GROUP}/v1alpha1", "DeviceClaim", "a")
    as_json = json.loads(kubectl("get", "dclaim", "-o", "json").stdout)
    assert as_json["kind"] == "List" and [item["metadata"]["name"] for item in as_json["items"]] == ["a", "b"]
    assert all(item["kind"] == "DeviceClaim" for item in as_json["items"])
    assert kubectl("get", "dclaim", "-o", "name").stdout.split() == [f"deviceclaim.{GROUP}/a", f"deviceclaim.{GROUP}/b"]
    jsonpath = "-o=jsonpath={range .items[*]}{.metadata.name}={.spec.claims[0].limits.count};{end}"
    assert kubectl("get", "dclaim", jsonpath).stdout == "a=1;b=2;"
    columns = kubectl("get", "dclaim", "-o", "custom-columns=NAME:.metadata.name,COUNT:.spec.claims[0].limits.count,TIER:.metadata.labels.tier").stdout
    assert rows(columns) == [["NAME", "COUNT", "TIER"], ["a", "1", "gold"], ["b", "2", "<none>"]]


def test_get_in_chunks_returns_everything(kubectl, live):
    live.mockapi.load([TESTDATA / "00-namespaces.yaml", TESTDATA / "50-claims.yaml"])
    whole = kubectl("get", "dclaim", "-A", "-o", "name").stdout.splitlines()
    assert len(whole) > 5
    chunked = kubectl("get", "dclaim", "-A", "-o", "name", "--chunk-size=2", "-v=6")
    assert chunked.stdout.splitlines() == whole
    pages = [line for line in chunked.stderr.splitlines() if "/deviceclaims?" in line and "limit=2" in line]
    assert len(pages) == (len(whole) + 1) // 2 and sum("continue=" in line for line in pages) == len(pages) - 1
    table = kubectl("get", "dclaim", "-A", "--chunk-size=2").stdout.splitlines()
    assert table[0].split()[:2] == ["NAMESPACE", "NAME"] and len(table) == len(whole) + 1, "one header for all pages"


def test_get_label_columns_all_namespaces_and_field_selectors(kubectl, write, live):
    claims = [claim("a", labels={"tier": "gold", "app": "x"}), claim("b"), claim("c", namespace="team-a", labels={"tier": "silver"})]
    live.mockapi.load([TESTDATA / "00-namespaces.yaml", write("claims.yaml", claims)])
    labelled = rows(kubectl("get", "dclaim", "-L", "tier").stdout)
    assert labelled[0][0] == "NAME" and labelled[0][-1] == "TIER"
    assert labelled[1][0] == "a" and labelled[1][-1] == "gold"
    assert labelled[2][0] == "b" and len(labelled[2]) == len(labelled[1]) - 1, "an empty TIER cell for b"
    shown = rows(kubectl("get", "dclaim", "--show-labels").stdout)
    assert shown[0][-1] == "LABELS" and {row[0]: row[-1] for row in shown[1:]} == {"a": "app=x,tier=gold", "b": "<none>"}
    everywhere = rows(kubectl("get", "dclaim", "-A").stdout)
    assert everywhere[0][:2] == ["NAMESPACE", "NAME"]
    assert [row[:2] for row in everywhere[1:]] == [["default", "a"], ["default", "b"], ["team-a", "c"]]
    selected = kubectl("get", "dclaim", "-A", "--field-selector", "metadata.name=c", "-o", "name").stdout
    assert selected == f"deviceclaim.{GROUP}/c\n"
    excluded = kubectl("get", "dclaim", "--field-selector", "metadata.name!=a", "-o", "name").stdout
    assert excluded == f"deviceclaim.{GROUP}/b\n"
    by_namespace = kubectl("get", "dclaim", "-A", "--field-selector=metadata.namespace=team-a", "-l", "tier in (gold,silver)", "-o", "name")
    assert by_namespace.stdout == f"deviceclaim.{GROUP}/c\n"
    bad = kubectl("get", "dclaim", "--field-selector", "spec.nope=1", check=False)
    assert bad.returncode == 1 and 'field label not supported: spec.nope' in bad.stderr


def test_get_watch_only_prints_each_change_once(kubectl, write, live):
    live.mockapi.load(write("claims.yaml", [claim("a"), claim("b")]))
    watching = kubectl.start_watching("get", "dclaim", "-w", "--watch-only", "--output-watch-events")
    kubectl("label", "dclaim", "a", "seen=yes")
    kubectl("annotate", "dclaim", "a", "note=yes")
    kubectl("apply", "-f", write("c.yaml", [claim("c")]))
    kubectl("delete", "dclaim", "b")
    output = stop_after_lines(watching, 5)
    events = [line.split()[:2] for line in output]
    assert events == [["EVENT", "NAME"], ["MODIFIED", "a"], ["MODIFIED", "a"], ["ADDED", "c"], ["DELETED", "b"]], output


def test_get_watch_of_a_selector_sees_objects_leave_and_enter_it(kubectl, write, live):
    live.mockapi.load(write("claims.yaml", [claim("a", labels={"sel": "yes"})]))
    watching = kubectl.start_watching("get", "dclaim", "-l", "sel=yes", "-w", "--output-watch-events")
    kubectl("label", "dclaim", "a", "sel=no", "--overwrite")
    kubectl("label", "dclaim", "a", "sel=yes", "--overwrite")
    events = [line.split()[:2] for line in stop_after_lines(watching, 4)]
    assert events == [["EVENT", "NAME"], ["ADDED", "a"], ["DELETED", "a"], ["ADDED", "a"]]


# -- custom resources -------------------------------------------------------------------------


def test_create_a_crd_then_objects_of_its_kind(kubectl, write):
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer", "description": "Size of the widget."}}}}}
    widgets = crd("widgets", "Widget", schema, shortNames=["wdg"], categories=["toys"])
    widgets["spec"]["versions"][0]["additionalPrinterColumns"] = [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]
    definition = write("crd.yaml", [widgets])
    created = kubectl("create", "-f", definition).stdout
    assert created == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n"
    kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=60s")
    objects = write("w.yaml", [{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{size}"}, "spec": {"size": size}} for size in (1, 2)])
    assert kubectl("create", "-f", objects).stdout.splitlines() == ["widget.example.com/w1 created", "widget.example.com/w2 created"]
    assert rows(kubectl("get", "wdg").stdout) == [["NAME", "SIZE"], ["w1", "1"], ["w2", "2"]]
    assert kubectl("get", "toys", "-o", "name").stdout.split() == ["widget.example.com/w1", "widget.example.com/w2"]
    assert "Size of the widget." in kubectl("explain", "widgets.spec.size").stdout
    assert rows(kubectl("api-resources", "--api-group=example.com").stdout)[1] == ["widgets", "wdg", "example.com/v1", "true", "Widget"]
    assert kubectl("delete", "-f", definition).stdout == 'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted\n'
    assert rows(kubectl("api-resources", "--api-group=example.com").stdout)[1:] == []


# -- warnings ---------------------------------------------------------------------------------


def test_custom_resources_warn_about_finalizers_without_a_domain(kubectl, write):
    created = kubectl("create", "-f", write("c.yaml", [claim("f", finalizers=["hold", "example.com/ok", "orphan"])]))
    warning = (
        'Warning: metadata.finalizers: "hold": prefer a domain-qualified finalizer name including a path (/) '
        "to avoid accidental conflicts with other finalizer writers"
    )
    assert created.stderr.splitlines() == [warning]
    patched = kubectl("patch", "dclaim", "f", "--type=merge", "-p", '{"metadata":{"finalizers":["hold","again"]}}')
    assert patched.stderr.splitlines() == [warning.replace('"hold"', '"again"')], "only the finalizers the write adds"
    assert kubectl("patch", "dclaim", "f", "--type=merge", "-p", '{"metadata":{"finalizers":null}}').stderr == ""


def test_a_deprecated_crd_version_warns_on_every_request(kubectl, write):
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    widgets = crd("widgets", "Widget", schema)
    widgets["spec"]["versions"][0]["deprecated"] = True
    definition = write("crd.yaml", [widgets])
    kubectl("create", "-f", definition)
    warning = "Warning: example.com/v1 Widget is deprecated"
    created = kubectl("create", "-f", write("w.yaml", [{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}]))
    assert created.stderr.splitlines() == [warning]
    assert kubectl("get", "widgets", "-o", "name").stderr.splitlines() == [warning]
    widgets["spec"]["versions"][0]["deprecationWarning"] = "widgets are going away"
    kubectl("apply", "-f", write("crd.yaml", [widgets]))
    assert kubectl("get", "widget", "w").stderr.splitlines() == ["Warning: widgets are going away"]
    del widgets["spec"]["versions"][0]["deprecationWarning"]
    widgets["spec"]["versions"][0]["deprecated"] = False
    kubectl("apply", "-f", write("crd.yaml", [widgets]))
    assert kubectl("get", "widget", "w").stderr == ""


def test_an_object_read_through_another_served_version_carries_that_version(kubectl, write):
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    gizmos = crd("gizmos", "Gizmo", schema)
    v1 = gizmos["spec"]["versions"][0]
    gizmos["spec"]["versions"] = [dict(v1, storage=False), dict(v1, name="v2")]
    kubectl("create", "-f", write("crd.yaml", [gizmos]))
    kubectl("create", "-f", write("g.yaml", [{"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}]))
    assert kubectl("get", "gizmos.v2.example.com", "g", "-o", "jsonpath={.apiVersion}").stdout == "example.com/v2"
    assert kubectl("get", "gizmos.v1.example.com", "g", "-o", "jsonpath={.apiVersion}").stdout == "example.com/v1"
    listed = kubectl("get", "gizmos.v2.example.com", "-o", "jsonpath={.items[*].apiVersion}")
    assert listed.stdout == "example.com/v2"


# -- what still differs from a real cluster ---------------------------------------------------


def test_core_kinds_refuse_finalizers_without_a_domain(kubectl, write):
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["hold"]}}
    refused = kubectl("create", "-f", write("cm.yaml", [config_map]), check=False)
    assert refused.returncode == 1
    assert 'metadata.finalizers[0]: Invalid value: "hold": name is neither a standard finalizer name nor is it fully qualified' in refused.stderr
