"""``mockapi schedule -f pod.yaml`` (a dry run of one pod's scheduling cycle) and ``mockapi scheduling
NAMESPACE/NAME`` (a server's record of a pod's last attempt), run in-process as ``mockapi.cli.main``:
offline on testdata, against real servers, and every bad input a clear one-line failure."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
import yaml

from mockapi import cli, schedule_cli
from mockapi.testing import MockAPIServer

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
EXAMPLE_PODS = {pod["metadata"]["name"]: pod for pod in yaml.safe_load_all((TESTDATA / "60-pods.yaml").read_text()) if pod}
NODES = [node for node in yaml.safe_load_all((TESTDATA / "05-nodes.yaml").read_text()) if node]
GREEDY = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "greedy", "namespace": "default"},
    "spec": {
        "containers": [{"name": "c", "image": "pause", "devices": [{"name": "lots"}]}],
        "deviceClaims": [{"name": "lots", "claim": {"claims": [{"deviceClass": "example.com-foozer-single", "requests": {"count": 40}}]}}],
    },
}  # fmt: skip


def write(tmp_path: Path, obj, name: str = "pod.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(obj) if isinstance(obj, list) else yaml.safe_dump(obj))
    return str(path)


def run(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def offline(capsys, tmp_path, pod, *args) -> tuple[int, str, str]:
    return run(capsys, "schedule", "-f", write(tmp_path, pod), "--from", str(TESTDATA), *args)


# ------------------------------------------------------------------ offline, on testdata
@pytest.mark.parametrize("name", sorted(EXAMPLE_PODS))
def test_each_example_pod_gets_a_node_offline_with_its_claims_devices_there(capsys, tmp_path, name):
    code, out, err = offline(capsys, tmp_path, EXAMPLE_PODS[name], "-o", "json")
    assert code == 0, err
    assert err == ""
    report = json.loads(out)
    node = report["node"]
    assert report["outcome"] == "Schedulable" and report["dryRun"] is True
    assert report["message"] == f"would assign default/{name} to {node}"
    [claim] = report["claims"]
    assert claim["entry"] == "foozer-gpu"
    if claim["source"] == "claimName":  # allocated first, as the allocator of `mockapi serve` would: it pins the pod
        assert claim["madeInMemory"] is False
        assert claim["allocated"]["node"] == node
        assert any(item["claim"] == claim["claim"] and item["node"] == node for item in report["allocatedFirst"])
    else:
        assert claim["madeInMemory"] is True and claim["claim"] == f"default/{name}-foozer-gpu-dryrun"
        assert claim["devices"] and all(device.startswith(f"{node}-") for device in claim["devices"])  # the node's own pools
    feasible = {row["node"] for row in report["filter"] if row["feasible"]}
    assert node in feasible and report["feasibleNodes"] == len(feasible)
    assert len(report["filter"]) == report["nodes"] == len(NODES)  # every node evaluated: the report is complete


def test_the_human_report_shows_claims_filter_scores_and_result(capsys, tmp_path):
    code, out, err = offline(capsys, tmp_path, EXAMPLE_PODS["template-foozer-claim"])
    assert code == 0, err
    sections = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert sections == [
        sections[0], "Allocated first, as mockapi serve's allocator would (in memory)", "Device claims", "Filter",
        "Scores (each plugin's normalized score x its weight; an extender's reply x weight x 10)", "Result",
    ]  # fmt: skip
    assert sections[0] == "Dry run of pod default/template-foozer-claim, scheduler default-scheduler: 18 nodes, 12 feasible"
    assert "  foozer-gpu: DeviceClaim default/template-foozer-claim-foozer-gpu-dryrun (from DeviceClaimTemplate example.com-foozer-single-superfast-claim" in out
    assert 'ignored pools (driver "sriov-nic" is not the class driver "example.com-foozer"): mixed-00-nic-0, mixed-00-nic-1' in out
    assert "mixed-00               no: had too few matching devices (spec.claims[0]: 0 matching devices, needs 1)" in out
    assert "  mixed-00               DeviceClaims: cannot allocate all claims" in out
    assert "  NODE                   TaintToleration x3  NodeResourcesFit x1  TOTAL" in out
    node = out.split("would be assigned to ")[1].split()[0]
    assert f"  {node}" in out.split("Filter")[1].split("Scores")[0]
    assert out.rstrip().endswith(f"    foozer-gpu: {node}-foozer/dev-00")


def test_a_pod_asking_for_more_devices_than_exist_exits_1_with_each_nodes_reason(capsys, tmp_path):
    code, out, err = offline(capsys, tmp_path, GREEDY)
    assert code == 1
    message = "0/18 nodes are available: 18 cannot allocate all claims."
    assert err.startswith(f"mockapi schedule: {message}") and err.count("\n") == 1
    filtered = out.split("\nFilter\n")[1].split("\n\n")[0].splitlines()
    assert len(filtered) == 18 and all(line.endswith("DeviceClaims: cannot allocate all claims") for line in filtered)
    assert "foozer-1000-large-00   no: had too few matching devices (spec.claims[0]: 16 matching devices, needs 40)" in out
    assert "    the claim alone: Unsatisfiable: 0/18 nodes can allocate the claim: 18 had too few matching devices." in out
    assert f"Result\n  Unschedulable: {message}" in out
    assert "Scores" not in out


def test_json_and_yaml_give_the_same_data_in_the_attempt_records_shape(capsys, tmp_path):
    code, out, _ = offline(capsys, tmp_path, EXAMPLE_PODS["embedded-foozer-claim"], "-o", "json")
    assert code == 0
    report = json.loads(out)
    assert list(report) == [
        "dryRun", "pod", "schedulerName", "time", "outcome", "node", "message", "nominatedNode", "nodes", "feasibleNodes",
        "preFilter", "filter", "scores", "extenderCalls", "claims", "allocatedFirst",
    ]  # fmt: skip
    assert report["pod"] == {"namespace": "default", "name": "embedded-foozer-claim", "uid": "00000000-0000-0000-0000-000000000000"}
    row = report["filter"][0]
    assert set(row) == {"node", "feasible", "verdicts"} and {"plugin", "code"} <= set(row["verdicts"][0])
    best = report["scores"][0]
    assert best["node"] == report["node"] and best["total"] == sum(part["weighted"] for part in best["scores"])
    assert all(part["weighted"] == part["score"] * part["weight"] for row in report["scores"] for part in row["scores"])
    claim = report["claims"][0]
    assert {"entry", "source", "claim", "found", "madeInMemory", "devices", "explain"} <= set(claim)
    assert {"options", "nodes", "result"} <= set(claim["explain"])
    code, text, _ = offline(capsys, tmp_path, EXAMPLE_PODS["embedded-foozer-claim"], "-o", "yaml")
    again = yaml.safe_load(text)
    assert code == 0 and {**again, "time": ""} == {**report, "time": ""}


def test_a_scheduler_configuration_picks_the_pods_profile(capsys, tmp_path):
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "my-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}],
    }  # fmt: skip
    path = write(tmp_path, config, "config.yaml")
    pod = {**EXAMPLE_PODS["embedded-foozer-claim"], "spec": {**EXAMPLE_PODS["embedded-foozer-claim"]["spec"], "schedulerName": "my-scheduler"}}
    code, out, err = offline(capsys, tmp_path, pod, "--scheduler-config", path, "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["schedulerName"] == "my-scheduler"
    assert {(p["plugin"], p["weight"]) for p in report["scores"][0]["scores"]} == {("NodeResourcesFit", 5)}
    code, _, err = offline(capsys, tmp_path, EXAMPLE_PODS["embedded-foozer-claim"], "--scheduler-config", path)
    assert code == 1
    assert err == 'mockapi schedule: no profile has schedulerName "default-scheduler" (profiles: my-scheduler): the scheduler leaves this pod alone\n'


# ------------------------------------------------------------------ bad input
def test_bad_input_is_one_clear_line(capsys, tmp_path):
    def fails(code: int, message: str, *args) -> None:
        got, out, err = run(capsys, *args)
        assert (got, out, err) == (code, "", f"mockapi schedule: {message}\n")

    pod = write(tmp_path, EXAMPLE_PODS["embedded-foozer-claim"])
    with pytest.raises(SystemExit) as exit_:
        cli.main(["schedule", "--from", str(TESTDATA)])
    assert exit_.value.code == 2
    assert "the following arguments are required: -f/--filename" in capsys.readouterr().err
    fails(2, f"{tmp_path}/absent.yaml: No such file or directory", "schedule", "-f", str(tmp_path / "absent.yaml"), "--from", str(TESTDATA))
    claims = str(TESTDATA / "50-claims.yaml")
    fails(2, f"{claims}: holds 16 documents, 0 of them Pods; give exactly one Pod", "schedule", "-f", claims, "--from", str(TESTDATA))
    node = write(tmp_path, NODES[0], "node.yaml")
    fails(2, f"{node}: not a Pod (kind 'Node')", "schedule", "-f", node, "--from", str(TESTDATA))
    pods = str(TESTDATA / "60-pods.yaml")
    fails(2, f"{pods}: holds 3 documents, 3 of them Pods; give exactly one Pod", "schedule", "-f", pods, "--from", str(TESTDATA))
    fails(2, f"{tmp_path}/nowhere: no such file or directory", "schedule", "-f", pod, "--from", str(tmp_path / "nowhere"))
    fails(2, "--from reads manifests instead of a server: give --from, or --server/--kubeconfig, not both", "schedule", "-f", pod, "--from", str(TESTDATA), "--server", "http://127.0.0.1:1")
    config = write(tmp_path, {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": "x"}, "config.yaml")
    got, _, err = run(capsys, "schedule", "-f", pod, "--from", str(TESTDATA), "--scheduler-config", config)
    assert got == 2 and err.startswith(f"mockapi schedule: {config}: ") and err.count("\n") == 1


def test_an_invalid_pod_gets_the_servers_field_errors(capsys, tmp_path):
    pod = {**GREEDY, "spec": {**GREEDY["spec"], "deviceClaims": [{"name": "lots", "claimName": "a", "claimTemplateName": "b"}]}}
    code, out, err = offline(capsys, tmp_path, pod)
    assert (code, out) == (2, "")
    assert err.startswith("mockapi schedule: the pod: ") and "spec.deviceClaims[0]" in err and err.count("\n") == 1


def test_an_unknown_claim_template_is_named(capsys, tmp_path):
    pod = {**GREEDY, "spec": {**GREEDY["spec"], "deviceClaims": [{"name": "lots", "claimTemplateName": "no-such-template"}]}}
    code, out, err = offline(capsys, tmp_path, pod)
    assert (code, out) == (1, "")
    assert err == 'mockapi schedule: deviceClaims[lots]: DeviceClaimTemplate.devmgmtproto.k8s.io "no-such-template" not found in namespace "default"\n'


def test_a_missing_claim_is_preFilters_verdict_on_every_node(capsys, tmp_path):
    pod = {**GREEDY, "spec": {**GREEDY["spec"], "deviceClaims": [{"name": "lots", "claimName": "no-such-claim"}]}}
    code, out, err = offline(capsys, tmp_path, pod)
    assert code == 1
    assert "  lots: DeviceClaim default/no-such-claim (named by the pod): not found" in out
    assert '  every node: PreFilter DeviceClaims: UnschedulableAndUnresolvable: device claim "no-such-claim" not found' in out
    assert err.startswith('mockapi schedule: 0/18 nodes are available: device claim "no-such-claim" not found.')


def test_the_pod_can_come_from_stdin(capsys, tmp_path, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(EXAMPLE_PODS["embedded-foozer-claim"])))
    code, out, _ = run(capsys, "schedule", "-f", "-", "--from", str(TESTDATA), "-o", "json")
    assert code == 0 and json.loads(out)["pod"]["name"] == "embedded-foozer-claim"


# ------------------------------------------------------------------ against a server
@pytest.fixture(scope="module")
def quiet(tmp_path_factory):
    """A server with testdata and no controllers (nothing changes by itself), its Nodes reporting
    allocatable resources as a kubelet would."""
    nodes = [{**node, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}} for node in NODES]
    path = tmp_path_factory.mktemp("quiet") / "05-nodes.yaml"
    path.write_text(yaml.safe_dump_all(nodes))
    files = [p for p in sorted(TESTDATA.glob("*.yaml")) if p.name != "05-nodes.yaml"]
    with MockAPIServer(load=[files[0], path, *files[1:]], allocator=False) as server:
        yield server


def resource_version(url: str) -> str:
    return httpx.get(f"{url}/api/v1/namespaces").json()["metadata"]["resourceVersion"]


def test_against_a_server_nothing_is_written(capsys, tmp_path, quiet):
    before = resource_version(quiet.url)
    quiet.clear_requests()
    code, out, err = run(capsys, "schedule", "-f", write(tmp_path, EXAMPLE_PODS["embedded-foozer-claim"]), "--server", quiet.url, "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["node"] and "allocatedFirst" not in report  # a server's allocator does its own work
    code, _, err = run(capsys, "schedule", "-f", write(tmp_path, GREEDY), "--server", quiet.url)
    assert code == 1 and "cannot allocate all claims" in err
    assert resource_version(quiet.url) == before
    assert {request["verb"] for request in quiet.requests()} <= {"get", "list"}
    assert not any(request["resource"] == "deviceclaims" and request["verb"] != "list" for request in quiet.requests())


def test_against_a_server_a_named_claim_not_allocated_yet_keeps_the_pod_pending(capsys, tmp_path, quiet):
    code, out, err = run(capsys, "schedule", "-f", write(tmp_path, EXAMPLE_PODS["ref-foozer-claim"]), "--server", quiet.url)
    assert code == 1
    assert "    not allocated yet" in out
    assert 'PreFilter DeviceClaims: UnschedulableAndUnresolvable: device claim "example.com-foozer-single-superfast-claim" is not allocated yet' in out


def test_scheduling_prints_the_servers_last_attempt_and_a_dry_run_replaces_the_pod_there(capsys, tmp_path):
    with MockAPIServer(load=[TESTDATA]) as server:
        url = f"{server.url}/mockapi/v1/scheduling/default/embedded-foozer-claim"
        deadline = time.monotonic() + 10
        while (record := httpx.get(url)).status_code != 200 or record.json()["outcome"] != "Scheduled":
            assert time.monotonic() < deadline, record.text
            time.sleep(0.05)
        code, out, err = run(capsys, "scheduling", "default/embedded-foozer-claim", "--server", server.url)
        assert code == 0, err
        node = record.json()["node"]
        assert out.startswith("Last scheduling attempt (")
        assert f"Result\n  Scheduled on {node}: Successfully assigned default/embedded-foozer-claim to {node}\n" in out
        assert f"  {node}" in out.split("Filter")[1]
        code, out, _ = run(capsys, "scheduling", "embedded-foozer-claim", "-n", "default", "--server", server.url, "-o", "json")
        assert code == 0 and json.loads(out) == httpx.get(url).json()
        code, out, err = run(capsys, "schedule", "-f", write(tmp_path, EXAMPLE_PODS["embedded-foozer-claim"]), "--server", server.url, "-o", "json")
        assert code == 0, err
        replacing = json.loads(out)["replacing"]  # the pod already there, and its claim, do not count: it comes again
        assert replacing["pod"] == "default/embedded-foozer-claim" and replacing["node"] == node
        assert [claim.startswith("default/embedded-foozer-claim-foozer-gpu-") for claim in replacing["claims"]] == [True]
        code, out, err = run(capsys, "scheduling", "default/nobody", "--server", server.url)
        assert (code, out) == (1, "")
        assert err == 'mockapi scheduling: error from server (NotFound): no scheduling attempt of pod "default/nobody" is recorded\n'
        code, _, err = run(capsys, "scheduling", "a/b/c", "--server", server.url)
        assert code == 2 and "a pod is NAMESPACE/NAME or NAME (with -n), not 'a/b/c'" in err


# ------------------------------------------------------------------ the layout
def test_render_names_extenders_and_nodes_not_evaluated():
    record = {
        "pod": {"namespace": "default", "name": "p", "uid": "u"}, "schedulerName": "my-scheduler", "time": "2026-01-01T00:00:00Z",
        "outcome": "Unschedulable", "node": "", "message": "0/3 nodes are available: 1 too hot.", "nominatedNode": "",
        "nodes": 3, "feasibleNodes": 1, "preFilter": None,
        "filter": [
            {"node": "a", "feasible": True, "verdicts": [{"plugin": "NodeName", "code": "Success"}, {"extender": "http://x/filter", "code": "Success"}]},
            {"node": "b", "feasible": False, "verdicts": [{"plugin": "NodeName", "code": "Success"}, {"extender": "http://x/filter", "code": "Unschedulable", "reasons": ["too hot"]}]},
            {"node": "c", "feasible": False, "verdicts": [{"plugin": "NodeName", "code": "Success"}]},
        ],
        "scores": [{"node": "a", "total": 70, "scores": [{"plugin": "NodeResourcesFit", "score": 50, "weight": 1, "weighted": 50}, {"extender": "http://x", "score": 2, "weight": 1, "weighted": 20}]}],
        "extenderCalls": [{"extender": "http://x", "verb": "filter", "url": "http://x/filter", "latencyMs": 1.5, "outcome": "success"}],
    }  # fmt: skip
    text = schedule_cli.render(record)
    assert text.startswith("Last scheduling attempt (2026-01-01T00:00:00Z) of pod default/p, scheduler my-scheduler: 3 nodes, 1 feasible\n")
    assert "  a  fits\n  b  extender http://x/filter: too hot\n  c  not evaluated" in text
    assert "  NODE  NodeResourcesFit x1  extender http://x x1  TOTAL\n  a                      50                    20     70\n" in text
    assert "Extender calls\n  http://x filter http://x/filter: success in 1.5 ms\n" in text
    assert text.endswith("Result\n  Unschedulable: 0/3 nodes are available: 1 too hot.\n")


def test_the_profiles_extenders_are_asked_and_shown(capsys, tmp_path):
    from tests.scheduler.extender_server import ExtenderServer, node_names

    def keep(body):
        names = node_names(body)
        kept = [n for n in names if n in ("foozer-1000-large-00", "foozer-1000-large-01")]
        return {"Nodes": {"items": [i for i in body["Nodes"]["items"] if i["metadata"]["name"] in kept]},
                "FailedNodes": {n: "too hot" for n in names if n not in kept}, "Error": ""}  # fmt: skip

    def prioritize(body):
        return [{"Host": n, "Score": 10 if n == "foozer-1000-large-01" else 0} for n in node_names(body)]

    with ExtenderServer({"filter": keep, "prioritize": prioritize}) as extender:
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": extender.url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 2}],
        }  # fmt: skip
        path = write(tmp_path, config, "config.yaml")
        code, out, err = offline(capsys, tmp_path, EXAMPLE_PODS["embedded-foozer-claim"], "--scheduler-config", path, "-o", "json")
        assert code == 0, err
        assert extender.verbs() == ["filter", "prioritize"]  # filter and prioritize only: a dry run never binds
        report = json.loads(out)
        assert report["node"] == "foozer-1000-large-01"  # without the extender's score: large-00, the first by name
        rows = {row["node"]: row for row in report["filter"]}
        assert rows["foozer-1000-medium-00"]["verdicts"][-1] == {"extender": extender.url, "code": "Unschedulable", "reasons": ["too hot"]}
        assert report["scores"][0]["scores"][-1] == {"extender": extender.url, "score": 10, "weight": 2, "weighted": 200}
        assert [call["verb"] for call in report["extenderCalls"]] == ["filter", "prioritize"]
        code, out, _ = offline(capsys, tmp_path, EXAMPLE_PODS["embedded-foozer-claim"], "--scheduler-config", path)
        assert f"  foozer-1000-medium-00  extender {extender.url}: too hot" in out
        assert f"extender {extender.url} x2" in out and "Extender calls" in out


def test_the_docs_example_is_what_the_command_prints(capsys, tmp_path):
    text = (ROOT / "docs" / "schedule-cli.md").read_text()
    example = text.split("```text\n", 1)[1].split("```", 1)[0]
    code, out, _ = offline(capsys, tmp_path, EXAMPLE_PODS["template-foozer-claim"])
    assert code == 0
    printed = out.splitlines()
    shown = [line for line in example.splitlines() if line.strip() != "..."]
    assert [line for line in printed if line in shown] == shown  # every line shown, in the same order
