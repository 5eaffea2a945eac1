"""examples/extender/ end to end, as its README runs it: extender.py as a real process, a real
mockapi with the example's scheduler configuration and cluster, and pods landing where the agents
say."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mockapi.controllers.scheduler import config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extender"

@pytest.fixture
def extender(tmp_path):
    env = {**os.environ, "HTTP_PORT": "0", "AGENTS": "label,load,least-loaded", "LOG_LEVEL": "DEBUG"}
    process = subprocess.Popen([sys.executable, str(EXAMPLE / "extender.py")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("listening on "), (line, process.stderr.read() if process.poll() is not None else "")
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def example_config(tmp_path: Path, url: str) -> Path:
    """The example's file with the extender's actual URL."""
    text = (EXAMPLE / "scheduler-config.yaml").read_text().replace("http://127.0.0.1:8888/scheduler", url)
    path = tmp_path / "scheduler-config.yaml"
    path.write_text(text)
    return path


def test_the_example_configuration_is_two_schedulers_and_only_mine_has_the_extender():
    cfg = config.load(EXAMPLE / "scheduler-config.yaml")
    assert [(p.scheduler_name, [e.url_prefix for e in p.extenders]) for p in cfg.profiles] == [
        ("default-scheduler", []), ("my-scheduler", ["http://127.0.0.1:8888/scheduler"])]  # fmt: skip
    assert len(list(yaml.safe_load_all((EXAMPLE / "scheduler-config.yaml").read_text()))) == 2


@pytest.mark.e2e
def test_pods_of_my_scheduler_land_where_the_agents_say(tmp_path, extender):
    from kubernetes import client as k8s

    from mockapi.testing import MockAPIServer

    documents = (EXAMPLE / "cluster.yaml").read_text().split("\n---\n")
    nodes = [d for d in documents if "kind: Node" in d]
    assert len(nodes) == 4
    with MockAPIServer(scheduler_config=example_config(tmp_path, extender)) as server:
        # the Nodes first, reported by the kubelet, then the pods: the last attempt's verdicts are
        # then the example's, not a "Too many pods" of a node whose capacity was not reported yet
        server.load("\n---\n".join(nodes))
        with server.api_client() as api:
            core = k8s.CoreV1Api(api)
            deadline = time.monotonic() + 20
            while any(not ((n.status and n.status.allocatable) or {}).get("pods") for n in core.list_node().items) and time.monotonic() < deadline:
                time.sleep(0.02)
            server.load("\n---\n".join(d for d in documents if d not in nodes))
            while True:
                placed = {name: core.read_namespaced_pod(name, "default").spec.node_name for name in ("mine", "theirs")}
                if all(placed.values()) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        attempt = server.server.scheduler.last_attempt("default", "mine")
    assert placed["mine"] == "calm" and placed["theirs"]  # the least loaded of the labelled nodes under 80
    reasons = {row["node"]: row["verdicts"][-1].get("reasons") for row in attempt["filter"]}
    assert reasons["busy"] == ["node(s) had load above 80"] and reasons["idle-but-slow"] == ["node(s) didn't have label extender.example.com/pool=fast"]
    # the full pass's calls; a first try of a node the pod was nominated to may come before them
    # (a retry that came at once, while the kubelet was still reporting the Nodes' capacity)
    assert [c["verb"] for c in attempt["extenderCalls"]][-2:] == ["filter", "prioritize"]
    assert attempt["scores"][0]["node"] == "calm"
