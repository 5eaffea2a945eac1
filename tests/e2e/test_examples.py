"""The example scenarios in examples/ run as a user runs them — a subprocess with --kubeconfig —
against one real server: each exits 0, says what happened, and leaves nothing behind; a scenario
that does not happen (no scheduler) exits 1 and says which step."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mockapi.testing import MockAPIServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
API = "/apis/devmgmtproto.k8s.io/v1alpha1"
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server():
    with MockAPIServer() as mockapi:
        yield mockapi


def run(script: str, kubeconfig: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXAMPLES / script), "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True, timeout=60)


def scenario(server, script: str) -> list[str]:
    """Run the script; its lines, once it has exited 0 and left no object of its own behind."""
    done = run(script, server.kubeconfig_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "scenario: done" and not any(line.startswith("FAILED") for line in lines)
    with httpx.Client(base_url=server.url) as http:
        for path in ("/api/v1/nodes", f"{API}/devicepools", f"{API}/deviceclasses"):
            assert http.get(path, params={"labelSelector": "examples.mockapi.k8s.io/scenario"}).json()["items"] == [], path
        namespaces = [n["metadata"]["name"] for n in http.get("/api/v1/namespaces").json()["items"]]
        for namespace in namespaces:  # being deleted, or gone already
            if namespace.startswith("example-"):
                assert http.get(f"/api/v1/namespaces/{namespace}").json()["status"]["phase"] == "Terminating"
    return lines


def test_a_pod_waits_on_cordoned_nodes_and_binds_to_the_uncordoned_one(server):
    lines = scenario(server, "unschedulable_then_schedulable.py")
    assert "scenario: pod1 is Pending: 0/3 nodes are available: 3 node(s) were unschedulable. " in "\n".join(lines) + " "
    assert "scenario: unschedulable-node1 uncordoned" in lines
    assert "scenario: pod1 is bound to unschedulable-node1" in lines
    assert "scenario: Event Scheduled: Successfully assigned example-unschedulable/pod1 to unschedulable-node1" in lines


def test_a_gang_binds_only_once_complete(server):
    lines = scenario(server, "gang.py")
    assert "scenario: after 0.5 s, 2 of 3 members created: none bound, they wait for their siblings" in lines
    complete = lines.index("scenario: worker-2 created: the group is complete")
    assert lines[complete + 1].startswith("scenario: all 3 members bound, ")
    assert [re.fullmatch(r"scenario: (worker-\d) is bound to gang-node[01]", line).group(1) for line in lines[complete + 2 : complete + 5]] == ["worker-0", "worker-1", "worker-2"]
    assert "scenario: all 3 members Running" in lines


def test_each_pod_gets_its_own_claim_and_a_freed_device_goes_to_the_waiting_pod(server):
    text = "\n".join(scenario(server, "claim_template_per_pod.py"))
    made = re.findall(r"scenario: (trainer-[abc]) got its own claim (\1-gpu-[a-z0-9]{5}) \(owned by Pod \1\)", text)
    assert sorted(pod for pod, _ in made) == ["trainer-a", "trainer-b", "trainer-c"]
    bound = re.findall(r"scenario: (trainer-[abc]) is bound to claim-template-gpu-node, its claim holds claim-template-gpu-node-gpus/(gpu-[01])\n", text)
    assert len(bound) == 2 and {device for _, device in bound} == {"gpu-0", "gpu-1"}
    waiting = re.search(r"scenario: (trainer-[abc]) is Pending: 0/2 nodes are available: 2 cannot allocate all claims\.", text).group(1)
    freed = re.search(r"scenario: \S+ deleted by the garbage collector, claim-template-gpu-node-gpus/(gpu-[01]) freed", text).group(1)
    assert f"scenario: {waiting} is bound to claim-template-gpu-node and Running, its claim holds claim-template-gpu-node-gpus/{freed}" in text


def test_a_high_priority_pod_preempts_a_low_priority_one(server):
    lines = scenario(server, "preemption.py")
    assert "scenario: important: status.nominatedNodeName=preemption-node" in lines
    assert "scenario: Event FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu." in lines
    assert any(re.fullmatch(r"scenario: low-[12]: Event Preempted: Preempted by pod [0-9a-f-]{36} on node preemption-node", line) for line in lines)
    assert "scenario: important is bound to preemption-node and Running" in lines


def test_a_scenario_that_does_not_happen_exits_1_naming_the_step():
    with MockAPIServer(scheduler=False) as mockapi:
        done = run("unschedulable_then_schedulable.py", mockapi.kubeconfig_path, "--timeout", "0.5")
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == "FAILED: the scheduler did not say why pod1 is Pending"


def test_a_scenario_without_a_server_exits_1_with_one_line(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text((ROOT / "kubeconfig").read_text().replace("55441", "1"))
    done = run("gang.py", kubeconfig)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("gang: cannot set up at http://127.0.0.1:1: ") and len(done.stderr.splitlines()) == 1
