"""The control endpoints under /mockapi/v1/ over raw HTTP (docs/control.md)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
import yaml

from mockapi.testing import MockAPIServer

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
NS_LIST = "/api/v1/namespaces"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {a: '1'}\n"
WIDGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


@pytest.fixture
def http(mockapi):
    with httpx.Client(base_url=mockapi.url, timeout=10) as session:
        yield session


def names(http, path: str) -> list[str]:
    return [item["metadata"]["name"] for item in http.get(path).json()["items"]]


# ---------------------------------------------------------------- reset
def test_reset_deletes_everything_but_crds_and_default_namespaces(http):
    http.post("/mockapi/v1/load", content=(ROOT / "testdata" / "00-namespaces.yaml").read_text() + "---\n" + WIDGET_CRD + "---\n" + CONFIGMAP)
    http.post("/apis/example.com/v1/namespaces/default/widgets", json={"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    response = http.post("/mockapi/v1/reset")
    assert response.status_code == 200 and response.json()["deleted"] >= 3
    assert names(http, NS_LIST) == ["default", "kube-public", "kube-system"]
    assert names(http, "/api/v1/configmaps") == []
    assert names(http, "/apis/example.com/v1/widgets") == []


def test_reset_without_keeping_crds_removes_applied_ones_and_restores_ours(http):
    http.post("/mockapi/v1/load", content=WIDGET_CRD)
    claims_crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/deviceclaims.devmgmtproto.k8s.io"
    original = http.get(claims_crd).json()["spec"]
    http.patch(claims_crd, json={"spec": {"names": {"shortNames": ["dcx"]}}}, headers={"content-type": "application/merge-patch+json"})
    http.post("/mockapi/v1/reset?keepCRDs=false")
    assert http.get("/apis/example.com/v1/widgets").status_code == 404
    assert http.get(claims_crd).json()["spec"] == original


def test_reset_can_keep_namespaces_and_restores_the_default_ones(http):
    http.post("/mockapi/v1/load", content="apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\n" + CONFIGMAP.replace("default", "team"))
    http.patch("/api/v1/namespaces/default", json={"metadata": {"labels": {"x": "y"}}}, headers={"content-type": "application/merge-patch+json"})
    http.post("/mockapi/v1/reset?keepNamespaces=true")
    assert "team" in names(http, NS_LIST) and names(http, "/api/v1/namespaces/team/configmaps") == []
    assert http.get("/api/v1/namespaces/default").json()["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}


def test_reset_ignores_finalizers_and_watchers_see_each_deletion(http, mockapi):
    created = http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "data": {}})
    rv = created.json()["metadata"]["resourceVersion"]
    lines: list[dict] = []

    def watch():
        with httpx.stream("GET", f"{mockapi.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=2") as stream:
            for line in stream.iter_lines():
                lines.append(json.loads(line))

    thread = threading.Thread(target=watch)
    thread.start()
    http.post("/mockapi/v1/reset")
    thread.join(5)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("DELETED", "held")]
    assert int(lines[0]["object"]["metadata"]["resourceVersion"]) > int(rv)


def test_reset_refuses_a_boolean_it_cannot_read(http):
    response = http.post("/mockapi/v1/reset?keepCRDs=maybe")
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"


# ---------------------------------------------------------------- load
def test_load_applies_multi_document_yaml_and_reports_what_changed(http):
    assert http.post("/mockapi/v1/load", content=CONFIGMAP).json() == {"created": 1, "configured": 0, "unchanged": 0}
    assert http.post("/mockapi/v1/load", content=CONFIGMAP).json() == {"created": 0, "configured": 0, "unchanged": 1}
    changed = CONFIGMAP.replace("'1'", "'2'") + "---\n" + json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "json-ns"}})
    assert http.post("/mockapi/v1/load", content=changed).json() == {"created": 1, "configured": 1, "unchanged": 0}
    assert http.get("/api/v1/namespaces/default/configmaps/settings").json()["data"] == {"a": "2"}


def test_a_failed_load_is_a_status_naming_the_source_and_document(http):
    body = CONFIGMAP + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nspec: {typo: 1}\n"
    response = http.post("/mockapi/v1/load?source=my.yaml", content=body)
    status = response.json()
    assert response.status_code == 400 and status["kind"] == "Status"
    assert status["message"].startswith("my.yaml, document 2 (ConfigMap x): ") and 'unknown field "spec"' in status["message"]


# ---------------------------------------------------------------- snapshot
def test_snapshot_strips_server_set_fields_and_leaves_out_what_the_server_made(http):
    http.post("/mockapi/v1/load", content=(ROOT / "testdata" / "00-namespaces.yaml").read_text() + "---\n" + WIDGET_CRD + "---\n" + CONFIGMAP)
    docs = list(yaml.safe_load_all(http.get("/mockapi/v1/snapshot").text))
    kinds = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert kinds[0][0] == "Namespace" and ("CustomResourceDefinition", "widgets.example.com") in kinds
    assert ("ConfigMap", "settings") in kinds
    assert not any(name in ("default", "kube-system") or name.endswith("devmgmtproto.k8s.io") for _, name in kinds)
    for doc in docs:
        assert not {"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} & set(doc["metadata"])
    assert all("status" not in d for d in docs if d["kind"] in ("Namespace", "CustomResourceDefinition"))


def test_a_snapshot_applies_cleanly_to_a_fresh_cluster_with_kubectl(mockapi, tmp_path):
    mockapi.load([ROOT / "testdata"])
    taken = mockapi.snapshot()
    docs = list(yaml.safe_load_all(taken))
    crds, snapshot = tmp_path / "crds.yaml", tmp_path / "snapshot.yaml"
    crds.write_text(yaml.safe_dump_all([d for d in docs if d["kind"] == "CustomResourceDefinition"]))  # served before their objects
    snapshot.write_text(taken)
    # no scheduler in the fresh cluster: a pod it bound meanwhile would differ from its snapshot by a nodeName
    with MockAPIServer(scheduler=False) as fresh:
        kubectl = ["kubectl", "--kubeconfig", str(fresh.kubeconfig_path), "apply", "-f"]
        subprocess.run([*kubectl, str(crds)], check=True, capture_output=True)
        result = subprocess.run([*kubectl, str(snapshot)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert without_last_applied(fresh.snapshot()) == docs


def without_last_applied(text: str) -> list[dict]:
    docs = list(yaml.safe_load_all(text))
    for doc in docs:
        annotations = doc["metadata"].get("annotations") or {}
        annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
        if not annotations:
            doc["metadata"].pop("annotations", None)
    return docs


def test_a_snapshot_can_be_narrowed_to_one_namespace(http):
    http.post("/mockapi/v1/load", content="apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\n" + CONFIGMAP + "---\n" + CONFIGMAP.replace("default", "team"))
    docs = list(yaml.safe_load_all(http.get("/mockapi/v1/snapshot?namespace=team").text))
    assert [(d["kind"], d["metadata"].get("namespace", d["metadata"]["name"])) for d in docs] == [("Namespace", "team"), ("ConfigMap", "team")]


# ---------------------------------------------------------------- requests
def test_requests_lists_recent_api_requests_with_filters(http):
    http.get("/api/v1/namespaces/default/configmaps", headers={"user-agent": "my-controller/1.0"})
    http.get("/api/v1/namespaces/default/configmaps", headers={"user-agent": "my-controller/1.0"})
    http.get("/api/v1/namespaces/default/configmaps/missing")
    http.get("/version")  # not an API request: not recorded
    items = http.get("/mockapi/v1/requests").json()["items"]
    assert [(i["verb"], i["resource"], i["namespace"], i["name"], i["code"]) for i in items] == [
        ("list", "configmaps", "default", "", 200),
        ("list", "configmaps", "default", "", 200),
        ("get", "configmaps", "default", "missing", 404),
    ]
    assert len(http.get("/mockapi/v1/requests?verb=list&userAgent=my-controller").json()["items"]) == 2
    assert [i["name"] for i in http.get("/mockapi/v1/requests?code=404").json()["items"]] == ["missing"]
    assert [i["seq"] for i in http.get("/mockapi/v1/requests?limit=1").json()["items"]] == [items[-1]["seq"]]
    assert all(i["latencySeconds"] >= 0 and i["time"].endswith("Z") for i in items)
    assert http.delete("/mockapi/v1/requests").json() == {"deleted": 3}
    assert http.get("/mockapi/v1/requests").json()["items"] == []


def test_the_request_ring_is_bounded():
    with MockAPIServer(request_log_size=3) as small, httpx.Client(base_url=small.url) as http:
        for _ in range(5):
            http.get(NS_LIST)
        assert [i["seq"] for i in http.get("/mockapi/v1/requests").json()["items"]] == [3, 4, 5]
        assert http.get("/mockapi/v1/requests?limit=x").status_code == 400


# ---------------------------------------------------------------- kubeconfig
def test_kubeconfig_points_at_the_address_the_client_used_and_kubectl_works_with_it(http, tmp_path):
    text = http.get("/mockapi/v1/kubeconfig").text
    assert yaml.safe_load(text)["clusters"][0]["cluster"]["server"] == str(http.base_url).rstrip("/")
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    out = subprocess.run(["kubectl", "--kubeconfig", str(path), "get", "namespaces", "-o", "name"], capture_output=True, text=True, check=True).stdout
    assert "namespace/default" in out.split()


# ---------------------------------------------------------------- allocation
def test_allocation_mode_can_be_read_changed_and_stepped(http):
    assert http.get("/mockapi/v1/allocation").json() == {
        "mode": "immediate", "delaySeconds": 1.0, "jitterSeconds": 0.0, "controller": True, "waiting": []
    }
    assert http.put("/mockapi/v1/allocation", json={"mode": "delay", "delaySeconds": 0.5, "jitterSeconds": 0.1}).json()["delaySeconds"] == 0.5
    assert http.put("/mockapi/v1/allocation", json={"mode": "manual"}).json()["mode"] == "manual"
    stepped = http.post("/mockapi/v1/allocation/step", json={"namespace": "default", "name": "c"}).json()["stepped"]
    assert stepped == [{"resource": "deviceclaims", "namespace": "default", "name": "c"}]
    assert http.post("/mockapi/v1/allocation/step").json()["stepped"] == []
    assert http.post("/mockapi/v1/allocation/step", json={"all": True}).json()["stepped"] == []


@pytest.mark.parametrize(
    "method, path, body, words",
    [
        ("PUT", "/mockapi/v1/allocation", {"mode": "later"}, 'unsupported allocation mode "later"'),
        ("PUT", "/mockapi/v1/allocation", {"delaySeconds": -1}, "must not be negative"),
        ("PUT", "/mockapi/v1/allocation", [1], "must be a JSON object"),
        ("POST", "/mockapi/v1/allocation/step", {"namespace": "default"}, "name is required"),
        ("POST", "/mockapi/v1/allocation/step", {"resource": "pods", "name": "p"}, "RESOURCE one of deviceclaims"),
    ],
)
def test_bad_allocation_requests_are_400_statuses(http, method, path, body, words):
    response = http.request(method, path, json=body)
    assert response.status_code == 400 and response.json()["kind"] == "Status" and words in response.json()["message"]


def test_the_index_lists_the_control_endpoints(http):
    endpoints = http.get("/mockapi/v1").json()["endpoints"]
    assert "/mockapi/v1/reset" in endpoints and "/mockapi/v1/allocation/step" in endpoints
    assert http.get("/mockapi/v1/nothing").json()["reason"] == "NotFound"
