"""The simulated kubelet in-process: a real registry behind LocalClient, the kubelet as a task."""

from __future__ import annotations

import asyncio

from mockapi import clock as clocks
from mockapi.client import Kind
from mockapi.controllers.kubelet import OPT_OUT, Kubelet, KubeletOptions, _grace
from tests.controllers.conftest import CLAIMS, EVENTS, NODES, PODS, get_or_none, new_client, running, settle, until

LEASES, NAMESPACES = Kind("coordination.k8s.io/v1", "Lease"), Kind("v1", "Namespace")


def run(scenario, *, options: KubeletOptions = KubeletOptions(), clock=None):
    async def main():
        client = new_client()
        client.registry.kubelet = True  # as mockapi serve sets it: bound pods are deleted gracefully
        kubelet = Kubelet(client, clock=clock, options=options)
        async with running(kubelet):
            return await asyncio.wait_for(scenario(client, kubelet), 10)

    return asyncio.run(main())


def node(name: str, *, annotations: dict | None = None, capacity: dict | None = None, pod_cidr: str | None = None) -> dict:
    found: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if annotations:
        found["metadata"]["annotations"] = annotations
    if pod_cidr:
        found["spec"] = {"podCIDR": pod_cidr}
    if capacity:
        found["status"] = {"capacity": capacity}
    return found


def pod(name: str, node_name: str | None = "node-a", *, init: list[str] = (), claims: list[dict] | None = None, **spec) -> dict:
    found_spec: dict = {"containers": [{"name": "app", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}], **spec}
    if init:
        found_spec["initContainers"] = [{"name": n, "image": "busybox"} for n in init]
    if node_name:
        found_spec["nodeName"] = node_name
    if claims:
        found_spec["deviceClaims"] = claims
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": found_spec}


async def events_of(client, name: str) -> list[tuple[str, str, str]]:
    items, _ = await client.list(EVENTS, "default")
    found = [e for e in items if e["involvedObject"]["name"] == name]
    return [(e["reason"], e["message"], e["involvedObject"].get("fieldPath", "")) for e in sorted(found, key=lambda e: e["metadata"]["name"])]


def condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == kind), None)


async def running_pod(client, name: str) -> dict:
    return await until(lambda: client.get(PODS, "default", name), lambda p: (p.get("status") or {}).get("phase") == "Running")


# ------------------------------------------------------------------------ nodes
def test_a_bare_node_gets_the_default_resources_addresses_node_info_and_a_ready_condition():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await settle(kubelet)
        found = await client.get(NODES, "", "node-a")
        status = found["status"]
        assert status["capacity"] == status["allocatable"] == {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "1Ti"}
        assert status["addresses"] == [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "node-a"}]
        assert status["nodeInfo"]["kubeletVersion"] == "v1.32.0"
        assert status["nodeInfo"]["operatingSystem"] == "linux"
        assert [c["type"] for c in status["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        ready = condition(found, "Ready")
        assert (ready["status"], ready["reason"], ready["message"]) == ("True", "KubeletReady", "kubelet is posting ready status")

    run(scenario)


def test_a_node_keeps_its_own_capacity_and_gets_it_as_allocatable_and_nodes_get_addresses_in_turn():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(NODES, node("node-b", capacity={"cpu": "4", "memory": "8Gi"}))
        await settle(kubelet)
        b = (await client.get(NODES, "", "node-b"))["status"]
        assert b["capacity"] == b["allocatable"] == {"cpu": "4", "memory": "8Gi"}
        assert b["addresses"][0] == {"type": "InternalIP", "address": "10.0.0.2"}

    run(scenario, options=KubeletOptions(capacity={"cpu": "8", "memory": "16Gi", "pods": "10"}))


def test_a_node_that_opts_out_is_left_alone_with_its_pods():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a", annotations={OPT_OUT: "false"}))
        await client.create(PODS, pod("p"))
        await settle(kubelet)
        assert not (await client.get(NODES, "", "node-a")).get("status")
        assert (await client.get(PODS, "default", "p"))["status"].get("phase", "Pending") == "Pending"

    run(scenario)


def test_heartbeats_renew_the_node_lease_and_leave_the_node_alone():
    clock = clocks.FakeClock()

    async def scenario(client, kubelet):
        created = await client.create(NODES, node("node-a"))
        await settle(kubelet)
        reported = await client.get(NODES, "", "node-a")
        lease = await client.get(LEASES, "kube-node-lease", "node-a")
        assert lease["spec"] == {"holderIdentity": "node-a", "leaseDurationSeconds": 40, "renewTime": clocks.rfc3339_micro(clock.now())}
        assert lease["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": created["metadata"]["uid"]}]
        clock.advance(10)
        kubelet.queue.kick()
        renewed = await until(lambda: client.get(LEASES, "kube-node-lease", "node-a"), lambda l: l["spec"]["renewTime"] != lease["spec"]["renewTime"])
        assert renewed["spec"]["renewTime"] == clocks.rfc3339_micro(clock.now())
        await settle(kubelet)
        assert (await client.get(NODES, "", "node-a"))["metadata"]["resourceVersion"] == reported["metadata"]["resourceVersion"]

    run(scenario, clock=clock, options=KubeletOptions(heartbeat_interval=10))


def test_the_node_status_is_reported_again_every_status_report_interval_heartbeat_time_only():
    clock = clocks.FakeClock()

    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await settle(kubelet)
        before = condition(await client.get(NODES, "", "node-a"), "Ready")
        clock.advance(60)
        kubelet.queue.kick()
        after = await until(lambda: client.get(NODES, "", "node-a"), lambda n: condition(n, "Ready")["lastHeartbeatTime"] != before["lastHeartbeatTime"])
        ready = condition(after, "Ready")
        assert ready["lastHeartbeatTime"] == clocks.rfc3339(clock.now())
        assert ready["lastTransitionTime"] == before["lastTransitionTime"]

    run(scenario, clock=clock, options=KubeletOptions(heartbeat_interval=10, status_report_interval=60))


def test_a_missing_node_lease_namespace_is_made_and_a_deleted_lease_made_again():
    clock = clocks.FakeClock()

    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await settle(kubelet)
        assert await get_or_none(client, NAMESPACES, "kube-node-lease", "") is not None
        await client.delete(LEASES, "kube-node-lease", "node-a")
        clock.advance(10)
        kubelet.queue.kick()
        await until(lambda: get_or_none(client, LEASES, "node-a", "kube-node-lease"))

    run(scenario, clock=clock, options=KubeletOptions(heartbeat_interval=10))


# ------------------------------------------------------------------------- pods
def test_a_bound_pod_runs_with_conditions_ips_container_statuses_and_the_kubelets_events():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(PODS, pod("p", init=["setup"]))
        found = await running_pod(client, "p")
        status = found["status"]
        assert [c["type"] for c in status["conditions"]] == ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
        assert all(c["status"] == "True" for c in status["conditions"])
        assert (status["hostIP"], status["hostIPs"]) == ("10.0.0.1", [{"ip": "10.0.0.1"}])
        assert (status["podIP"], status["podIPs"]) == ("10.244.0.2", [{"ip": "10.244.0.2"}])
        assert status["startTime"]
        app = status["containerStatuses"][0]
        assert (app["name"], app["image"], app["ready"], app["started"], app["restartCount"]) == ("app", "nginx:1.27", True, True, 0)
        assert app["containerID"].startswith("containerd://") and len(app["containerID"]) == len("containerd://") + 64
        assert app["imageID"].startswith("nginx@sha256:")
        assert "running" in app["state"]
        setup = status["initContainerStatuses"][0]
        assert setup["state"]["terminated"]["reason"] == "Completed" and setup["state"]["terminated"]["exitCode"] == 0
        await settle(kubelet)
        assert await events_of(client, "p") == [
            ("Pulled", 'Container image "busybox" already present on machine', "spec.initContainers{setup}"),
            ("Created", "Created container setup", "spec.initContainers{setup}"),
            ("Started", "Started container setup", "spec.initContainers{setup}"),
            ("Pulled", 'Container image "nginx:1.27" already present on machine', "spec.containers{app}"),
            ("Created", "Created container app", "spec.containers{app}"),
            ("Started", "Started container app", "spec.containers{app}"),
            ("Pulled", 'Container image "busybox" already present on machine', "spec.containers{log}"),
            ("Created", "Created container log", "spec.containers{log}"),
            ("Started", "Started container log", "spec.containers{log}"),
        ]
        items, _ = await client.list(EVENTS, "default")
        assert {(e["source"]["component"], e["source"]["host"]) for e in items} == {("kubelet", "node-a")}

    run(scenario)


def test_an_existing_pod_scheduled_condition_is_kept():
    async def scenario(client, kubelet):
        await client.create(PODS, pod("p"))
        scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2023-05-05T05:05:05Z"}
        await client.patch(PODS, "default", "p", {"status": {"conditions": [scheduled]}}, subresource="status")
        await client.create(NODES, node("node-a"))
        found = await running_pod(client, "p")
        assert condition(found, "PodScheduled")["lastTransitionTime"] == "2023-05-05T05:05:05Z"

    run(scenario)


def test_pods_get_ips_from_their_nodes_range_and_host_network_pods_the_nodes_ip():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(NODES, node("node-b"))
        await client.create(NODES, node("node-c", pod_cidr="192.168.7.0/24"))
        await settle(kubelet)
        for name, where in (("a1", "node-a"), ("a2", "node-a"), ("b1", "node-b"), ("c1", "node-c")):
            await client.create(PODS, pod(name, where))
        await client.create(PODS, pod("h", "node-b", hostNetwork=True))
        ips = {name: (await running_pod(client, name))["status"]["podIP"] for name in ("a1", "a2", "b1", "c1", "h")}
        assert ips == {"a1": "10.244.0.2", "a2": "10.244.0.3", "b1": "10.244.1.2", "c1": "192.168.7.2", "h": "10.0.0.2"}

    run(scenario)


def test_a_pod_waits_for_a_node_that_does_not_exist_yet_and_an_unbound_pod_is_not_touched():
    async def scenario(client, kubelet):
        await client.create(PODS, pod("p", "node-later"))
        await client.create(PODS, pod("unbound", None))
        await settle(kubelet)
        assert (await client.get(PODS, "default", "p"))["status"].get("phase", "Pending") == "Pending"
        await client.create(NODES, node("node-later"))
        await running_pod(client, "p")
        await settle(kubelet)
        assert (await client.get(PODS, "default", "unbound"))["status"].get("phase", "Pending") == "Pending"

    run(scenario)


def test_the_start_delay_is_honoured():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await settle(kubelet)
        await client.create(PODS, pod("p"))
        await settle(kubelet)
        assert (await client.get(PODS, "default", "p"))["status"].get("phase", "Pending") == "Pending"
        await running_pod(client, "p")

    run(scenario, options=KubeletOptions(start_delay=0.1))


def claim(name: str) -> dict:
    return {"apiVersion": CLAIMS.api_version, "kind": "DeviceClaim", "metadata": {"name": name, "namespace": "default"}, "spec": {"claims": [{"deviceClass": "gpu"}]}}


async def allocate(client, name: str, pods: list[str]) -> None:
    status = {"allocations": [{"devicePoolName": "pool-a", "deviceName": "dev-0"}], "podNames": pods}
    await client.patch(CLAIMS, "default", name, {"status": status}, subresource="status")


def test_a_pod_starts_only_once_its_claims_are_allocated_and_reserved_for_it():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(CLAIMS, claim("shared"))
        await client.create(PODS, pod("p", claims=[{"name": "gpu", "claimName": "shared"}]))
        await settle(kubelet)
        assert (await client.get(PODS, "default", "p"))["status"].get("phase", "Pending") == "Pending"
        await allocate(client, "shared", ["someone-else"])
        await settle(kubelet)
        assert (await client.get(PODS, "default", "p"))["status"].get("phase", "Pending") == "Pending"
        await allocate(client, "shared", ["someone-else", "p"])
        await running_pod(client, "p")
        await settle(kubelet)
        warnings = [(r, m) for r, m, _ in await events_of(client, "p") if r == "FailedPrepareDynamicResources"]
        assert warnings[0] == ("FailedPrepareDynamicResources", "Failed to prepare dynamic resources: DeviceClaim default/shared is not allocated")
        assert warnings[1][1].startswith("Failed to prepare dynamic resources: pod p (")
        assert "is not allowed to use DeviceClaim shared" in warnings[1][1]
        assert len(warnings) == 2  # once per reason, not once per retry

    run(scenario)


def test_a_claim_made_for_the_pod_is_found_through_its_device_claim_statuses():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(PODS, pod("p", claims=[{"name": "gpu", "claimTemplateName": "tpl"}]))
        await settle(kubelet)
        assert (await events_of(client, "p"))[-1][1] == 'Failed to prepare dynamic resources: pod "p": DeviceClaim for entry "gpu" not created yet'
        await client.create(CLAIMS, claim("p-gpu-abcde"))
        await client.patch(PODS, "default", "p", {"status": {"deviceClaimStatuses": [{"name": "gpu", "deviceClaimName": "p-gpu-abcde"}]}}, subresource="status")
        await settle(kubelet)
        assert (await events_of(client, "p"))[-1][1] == "Failed to prepare dynamic resources: DeviceClaim default/p-gpu-abcde is not allocated"
        await allocate(client, "p-gpu-abcde", ["p"])
        await running_pod(client, "p")

    run(scenario)


# --------------------------------------------------------------------- endings
def test_a_deleted_running_pod_gets_killing_events_and_is_deleted_with_grace_zero():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(PODS, {**pod("p"), "metadata": {"name": "p", "namespace": "default", "finalizers": ["example.com/hold"]}})
        await running_pod(client, "p")
        await client.delete(PODS, "default", "p")
        await until(lambda: asyncio.sleep(0, client.deletes), lambda d: ("Pod", "default", "p", "", 0) in d)
        await settle(kubelet)
        killing = [(r, m, f) for r, m, f in await events_of(client, "p") if r == "Killing"]
        assert killing == [("Killing", "Stopping container app", "spec.containers{app}"), ("Killing", "Stopping container log", "spec.containers{log}")]
        status = (await client.get(PODS, "default", "p"))["status"]  # held by its finalizer: its final status shows
        assert status["phase"] == "Succeeded"
        assert {c["type"]: c["status"] for c in status["conditions"]} == {
            "PodReadyToStartContainers": "False", "Initialized": "True", "Ready": "False", "ContainersReady": "False", "PodScheduled": "True",
        }  # fmt: skip
        app = status["containerStatuses"][0]
        assert (app["ready"], app["state"]["terminated"]["exitCode"], app["state"]["terminated"]["reason"]) == (False, 0, "Completed")

    run(scenario)


def test_a_pod_deleted_gracefully_ends_after_the_maximum_grace():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(PODS, pod("p"))
        await running_pod(client, "p")
        await client.delete(PODS, "default", "p")
        terminating = await client.get(PODS, "default", "p")
        assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
        await settle(kubelet)
        assert await get_or_none(client, PODS, "p") is not None  # within its (shortened) grace
        await until(lambda: get_or_none(client, PODS, "p"), lambda p: p is None)
        assert client.deletes[-1] == ("Pod", "default", "p", "", 0)
        assert [r for r, _, _ in await events_of(client, "p")].count("Killing") == 2

    run(scenario, options=KubeletOptions(max_grace=0.15))


def test_a_pending_pod_deleted_gracefully_goes_at_once_without_killing_events():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(CLAIMS, claim("never"))
        await client.create(PODS, pod("p", claims=[{"name": "gpu", "claimName": "never"}]))
        await settle(kubelet)
        await client.delete(PODS, "default", "p")
        await until(lambda: get_or_none(client, PODS, "p"), lambda p: p is None)
        assert "Killing" not in [r for r, _, _ in await events_of(client, "p")]

    run(scenario)


def test_the_grace_period_is_the_pods_shortened_to_the_maximum():
    meta = {"name": "p", "deletionGracePeriodSeconds": 30}
    assert _grace({"metadata": meta}, 5) == 5
    assert _grace({"metadata": {**meta, "deletionGracePeriodSeconds": 2}}, 5) == 2
    assert _grace({"metadata": {"name": "p"}, "spec": {"terminationGracePeriodSeconds": 1}}, 5) == 1
    assert _grace({"metadata": {"name": "p"}}, 60) == 30
    assert _grace({"metadata": meta}, 0) == 0


def test_pods_of_a_deleted_node_are_deleted():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(NODES, node("node-b"))
        await client.create(PODS, pod("on-a", "node-a"))
        await client.create(PODS, pod("on-b", "node-b"))
        await running_pod(client, "on-a")
        seen: list = []
        synced = asyncio.Event()

        async def watch() -> None:
            async for event in client.watch(PODS, "default"):
                if event.type == "SYNCED":
                    synced.set()
                elif synced.is_set() and event.object["metadata"]["name"] == "on-a":
                    seen.append((event.type, event.object))

        watching = asyncio.create_task(watch())
        await synced.wait()
        await client.delete(NODES, "", "node-a")
        await until(lambda: get_or_none(client, PODS, "on-a"), lambda p: p is None)
        assert ("Pod", "default", "on-a", "", 0) in client.deletes
        assert await get_or_none(client, PODS, "on-b") is not None
        await until(lambda: asyncio.sleep(0, seen), lambda found: found and found[-1][0] == "DELETED")
        watching.cancel()
        # kube's pod GC: marked Failed, with DisruptionTarget beside the other conditions, then deleted
        (updated, failed), (deleted, gone) = seen[-2:]
        assert (updated, deleted) == ("MODIFIED", "DELETED") and failed["status"]["phase"] == gone["status"]["phase"] == "Failed"
        target = condition(failed, "DisruptionTarget")
        assert (target["status"], target["reason"], target["message"]) == ("True", "DeletionByPodGC", "PodGC: node no longer exists")
        assert condition(failed, "Ready") is not None  # the kubelet's conditions are kept

    run(scenario)


def test_a_pod_bound_to_a_node_that_does_not_exist_is_deleted_after_the_quarantine_unless_the_node_comes():
    """kube's pod GC (gcOrphaned): a pod bound to a node nobody knows — never created, or deleted
    before the binding came — is deleted once the node has stayed missing for the quarantine."""
    clock = clocks.FakeClock()

    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a"))
        await client.create(NODES, node("node-b"))
        await client.create(PODS, pod("orphan", "node-x"))
        await client.create(PODS, pod("early", "node-y"))  # its node comes within the quarantine
        await client.delete(NODES, "", "node-b")
        await settle(kubelet)
        await client.create(PODS, pod("late", "node-b"))  # bound after its node went
        await settle(kubelet)
        clock.advance(39)
        kubelet.queue.kick()
        await client.create(NODES, node("node-y"))
        await settle(kubelet)
        assert {p["metadata"]["name"] for p in (await client.list(PODS, "default"))[0]} == {"orphan", "early", "late"}
        clock.advance(2)
        kubelet.queue.kick()
        await until(lambda: client.list(PODS, "default"), lambda found: {p["metadata"]["name"] for p in found[0]} == {"early"})
        assert ("Pod", "default", "orphan", "", 0) in client.deletes and ("Pod", "default", "late", "", 0) in client.deletes

    run(scenario, clock=clock, options=KubeletOptions(orphan_quarantine=40))


def test_a_restarted_kubelet_leaves_running_pods_and_reported_nodes_as_they_are():
    async def main():
        client = new_client()
        first = Kubelet(client)
        async with running(first):
            await client.create(NODES, node("node-a"))
            await client.create(PODS, pod("p"))
            await running_pod(client, "p")
            await settle(first)
        before_pod, before_node = await client.get(PODS, "default", "p"), await client.get(NODES, "", "node-a")
        before_events = await events_of(client, "p")
        second = Kubelet(client)
        async with running(second):
            await client.create(PODS, pod("q"))
            q = await running_pod(client, "q")
            await settle(second)
            assert q["status"]["podIP"] == "10.244.0.3"  # p keeps .2
            assert (await client.get(PODS, "default", "p"))["metadata"]["resourceVersion"] == before_pod["metadata"]["resourceVersion"]
            assert (await client.get(NODES, "", "node-a"))["metadata"]["resourceVersion"] == before_node["metadata"]["resourceVersion"]
            assert await events_of(client, "p") == before_events

    asyncio.run(main())


def test_the_garbage_collector_deletes_a_node_lease_with_its_node():
    from mockapi.controllers.gc import GarbageCollector

    async def main():
        client = new_client()
        kubelet, gc = Kubelet(client), GarbageCollector(client)
        async with running(kubelet, gc):
            await client.create(NODES, node("node-a"))
            await until(lambda: get_or_none(client, LEASES, "node-a", "kube-node-lease"))
            await client.delete(NODES, "", "node-a")
            await until(lambda: get_or_none(client, LEASES, "node-a", "kube-node-lease"), lambda lease: lease is None)

    asyncio.run(asyncio.wait_for(main(), 10))


def test_pods_and_claims_are_read_from_the_informers_not_fetched_per_pod():
    async def scenario(client, kubelet):
        fetched = []
        get = client.get

        async def counting_get(kind, namespace, name):
            fetched.append(kind.kind)
            return await get(kind, namespace, name)

        client.get = counting_get
        await client.create(NODES, node("node-a"))
        await client.create(CLAIMS, claim("shared"))
        await allocate(client, "shared", ["p"])
        await client.create(PODS, pod("p", claims=[{"name": "gpu", "claimName": "shared"}]))
        await until(lambda: get(PODS, "default", "p"), lambda p: (p.get("status") or {}).get("phase") == "Running")
        return [kind for kind in fetched if kind in ("Pod", "DeviceClaim")]

    assert run(scenario) == []


# -------------------------------------------------------------------- admission
def asking(name: str, node_name: str = "node-a", **requests) -> dict:
    """A pod of one container requesting ``requests`` (``example_com_foo`` for ``example.com/foo``)."""
    wanted = {k.replace("_com_", ".com/"): v for k, v in requests.items()}
    return pod(name, node_name, containers=[{"name": "app", "image": "nginx:1.27", "resources": {"requests": wanted}}])


async def failed_pod(client, name: str) -> dict:
    return await until(lambda: client.get(PODS, "default", name), lambda p: (p.get("status") or {}).get("phase") == "Failed")


async def warnings_of(client, name: str) -> list[tuple[str, str]]:
    items, _ = await client.list(EVENTS, "default")
    return [(e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name and e["type"] == "Warning"]


def test_a_pod_bound_past_the_nodes_pod_count_is_rejected_out_of_pods_as_kubes_reject_pod_writes_it():
    async def scenario(client, kubelet):
        await client.create(NODES, node("node-a", capacity={"cpu": "4", "memory": "8Gi", "pods": "1"}))
        await client.create(PODS, pod("first"))
        await running_pod(client, "first")
        await client.create(PODS, pod("second"))
        second = await failed_pod(client, "second")
        message = "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"
        assert (second["status"]["reason"], second["status"]["message"]) == ("OutOfpods", f"Pod was rejected: {message}")
        assert second["status"]["startTime"]
        assert "containerStatuses" not in second["status"]
        assert await warnings_of(client, "second") == [("OutOfpods", message)]
        await settle(kubelet)
        assert (await client.get(PODS, "default", "first"))["status"]["phase"] == "Running"

    run(scenario)


def test_cpu_memory_and_extended_resources_are_admitted_against_what_earlier_pods_hold():
    async def scenario(client, kubelet):
        capacity = {"cpu": "1", "memory": "1Gi", "pods": "10", "example.com/foo": "1"}
        await client.create(NODES, node("node-a", capacity=capacity))
        await client.create(PODS, asking("big", cpu="600m", memory="512Mi"))
        await running_pod(client, "big")
        await client.create(PODS, asking("cpu", cpu="500m"))
        assert (await failed_pod(client, "cpu"))["status"]["message"] == "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 600, capacity: 1000"
        await client.create(PODS, asking("memory", memory="600Mi"))
        assert (await failed_pod(client, "memory"))["status"]["reason"] == "OutOfmemory"
        await client.create(PODS, asking("foo", example_com_foo="2"))
        foo = await failed_pod(client, "foo")
        assert (foo["status"]["reason"], foo["status"]["message"]) == (
            "OutOfexample.com/foo", "Pod was rejected: Node didn't have enough resource: example.com/foo, requested: 2, used: 0, capacity: 1")
        # an extended resource the node does not have is not counted (removeMissingExtendedResources);
        # a rejected pod holds nothing
        await client.create(PODS, asking("other", cpu="400m", example_com_bar="5"))
        await running_pod(client, "other")
        # a pod that finished gives its share back
        await client.delete(PODS, "default", "big")
        await client.create(PODS, asking("after", cpu="600m"))
        await running_pod(client, "after")

    run(scenario)


async def two_running_pods(client) -> None:
    """node-a, room for two pods, and p1 and p2 running on it."""
    await client.create(NODES, node("node-a", capacity={"cpu": "4", "memory": "8Gi", "pods": "2"}))
    await client.create(PODS, pod("p1"))
    await client.create(PODS, pod("p2"))
    await running_pod(client, "p1")
    await running_pod(client, "p2")


def test_pods_are_admitted_again_in_creation_order_when_the_nodes_allocatable_shrinks():
    async def scenario(client, kubelet):
        await two_running_pods(client)
        await client.patch(NODES, "", "node-a", {"status": {"allocatable": {"pods": "1"}}}, subresource="status")
        p2 = await failed_pod(client, "p2")  # created in the same second: by name
        assert p2["status"]["reason"] == "OutOfpods"
        assert all("terminated" in c["state"] for c in p2["status"]["containerStatuses"])  # its containers stopped
        await settle(kubelet)
        assert (await client.get(PODS, "default", "p1"))["status"]["phase"] == "Running"

    run(scenario)


def test_a_node_created_again_before_its_pods_are_collected_admits_them_again():
    async def scenario(client, kubelet):
        await two_running_pods(client)
        await client.delete(NODES, "", "node-a")
        await client.create(NODES, node("node-a", capacity={"cpu": "4", "memory": "8Gi", "pods": "1"}))  # before the pod GC looks
        assert (await failed_pod(client, "p2"))["status"]["reason"] == "OutOfpods"
        await settle(kubelet)
        assert (await client.get(PODS, "default", "p1"))["status"]["phase"] == "Running"

    run(scenario)
