"""The garbage collector in-process: a real registry behind LocalClient, the collector as a task."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mockapi.client import Kind
from mockapi.controllers.gc import GarbageCollector, served_kind
from mockapi.controllers.ownergraph import Graph
from tests.controllers.conftest import (
    CLAIMS, CONFIGMAPS, PODS, SECRETS, configmap, delete_with_policy, get_or_none, new_client, ref, running, settle, until,
)


def run(scenario):
    async def main():
        client = new_client()
        gc = GarbageCollector(client)
        async with running(gc):
            return await asyncio.wait_for(scenario(client, gc), 10)

    return asyncio.run(main())


async def names(client, kind=CONFIGMAPS) -> set[str]:
    return {obj["metadata"]["name"] for obj in (await client.list(kind, "default"))[0]}


def test_background_deleting_an_owner_deletes_its_dependents_and_nothing_else():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        await client.create(CONFIGMAPS, configmap("a", ref(owner)))
        await client.create(SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default", "ownerReferences": [ref(owner)]}})
        await client.create(CONFIGMAPS, configmap("bystander"))
        await settle(gc)
        assert await names(client) == {"owner", "a", "bystander"}
        await client.delete(CONFIGMAPS, "default", "owner")
        await settle(gc)
        assert await names(client) == {"bystander"}
        assert await names(client, SECRETS) == set()
        assert ("ConfigMap", "default", "a", "Background", None) in client.deletes

    run(scenario)


def test_a_chain_of_dependents_goes_level_by_level():
    async def scenario(client, gc):
        top = await client.create(CONFIGMAPS, configmap("top"))
        middle = await client.create(CONFIGMAPS, configmap("middle", ref(top)))
        await client.create(CONFIGMAPS, configmap("leaf", ref(middle)))
        await client.delete(CONFIGMAPS, "default", "top")
        await settle(gc)
        assert await names(client) == set()

    run(scenario)


def test_owners_are_matched_by_uid_not_only_by_name():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        await client.create(CONFIGMAPS, configmap("impostor-ref", {**ref(owner), "uid": "00000000-0000-0000-0000-00000000dead"}))
        await client.create(CONFIGMAPS, configmap("real-ref", ref(owner)))
        await settle(gc)
        assert await names(client) == {"owner", "real-ref"}
        # the owner deleted and created again under its name: the old one's dependents still go
        await client.delete(CONFIGMAPS, "default", "owner")
        await client.create(CONFIGMAPS, configmap("owner"))
        await settle(gc)
        assert await names(client) == {"owner"}

    run(scenario)


def test_a_dependent_created_after_its_owner_is_gone_is_deleted():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        await client.delete(CONFIGMAPS, "default", "owner")
        await settle(gc)
        await client.create(CONFIGMAPS, configmap("late", ref(owner)))
        await settle(gc)
        assert await names(client) == set()

    run(scenario)


def test_a_dependent_with_two_owners_loses_the_reference_to_the_first_and_goes_with_the_second():
    async def scenario(client, gc):
        one = await client.create(CONFIGMAPS, configmap("one"))
        two = await client.create(CONFIGMAPS, configmap("two"))
        await client.create(CONFIGMAPS, configmap("shared", ref(one), ref(two)))
        await client.delete(CONFIGMAPS, "default", "one")
        await settle(gc)
        shared = await client.get(CONFIGMAPS, "default", "shared")
        assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["two"]
        await client.delete(CONFIGMAPS, "default", "two")
        await settle(gc)
        assert await names(client) == set()

    run(scenario)


def test_foreground_the_owner_stays_until_its_blocking_dependents_are_gone():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        await client.create(CONFIGMAPS, configmap("blocking", ref(owner, block=True), finalizers=["example.com/hold"]))
        await client.create(CONFIGMAPS, configmap("free", ref(owner)))
        await delete_with_policy(client, CONFIGMAPS, "owner", "Foreground")
        await settle(gc)
        # both dependents are deleted; the blocking one is held by its own finalizer, and so is the owner
        assert await names(client) == {"owner", "blocking"}
        blocking = await client.get(CONFIGMAPS, "default", "blocking")
        assert blocking["metadata"].get("deletionTimestamp")
        held = await client.get(CONFIGMAPS, "default", "owner")
        assert held["metadata"]["finalizers"] == ["foregroundDeletion"]
        await client.patch(CONFIGMAPS, "default", "blocking", {"metadata": {"finalizers": None}})
        await settle(gc)
        assert await names(client) == set()

    run(scenario)


def test_foreground_with_no_blocking_dependent_removes_the_finalizer_at_once():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner", finalizers=["example.com/keep"]))
        await client.create(CONFIGMAPS, configmap("free", ref(owner, block=False)))
        await delete_with_policy(client, CONFIGMAPS, "owner", "Foreground")
        await settle(gc)
        held = await client.get(CONFIGMAPS, "default", "owner")
        assert held["metadata"]["finalizers"] == ["example.com/keep"]  # ours is gone, the other stays
        assert await names(client) == {"owner"}

    run(scenario)


def test_foreground_an_owner_with_another_solid_owner_keeps_the_dependent_and_drops_the_reference():
    async def scenario(client, gc):
        going = await client.create(CONFIGMAPS, configmap("going"))
        staying = await client.create(CONFIGMAPS, configmap("staying"))
        await client.create(CONFIGMAPS, configmap("shared", ref(going, block=True), ref(staying)))
        await delete_with_policy(client, CONFIGMAPS, "going", "Foreground")
        await settle(gc)
        assert await names(client) == {"staying", "shared"}
        shared = await client.get(CONFIGMAPS, "default", "shared")
        assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["staying"]

    run(scenario)


def test_orphan_removes_the_owner_reference_from_each_dependent_then_the_finalizer():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        other = await client.create(CONFIGMAPS, configmap("other"))
        await client.create(CONFIGMAPS, configmap("a", ref(owner)))
        await client.create(CONFIGMAPS, configmap("b", ref(owner), ref(other)))
        await delete_with_policy(client, CONFIGMAPS, "owner", "Orphan")
        await settle(gc)
        assert await names(client) == {"other", "a", "b"}
        a, b = await client.get(CONFIGMAPS, "default", "a"), await client.get(CONFIGMAPS, "default", "b")
        assert "ownerReferences" not in a["metadata"]
        assert [r["name"] for r in b["metadata"]["ownerReferences"]] == ["other"]

    run(scenario)


def test_on_start_the_collector_catches_up_with_what_happened_while_it_was_away():
    async def main():
        client = new_client()
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        await client.create(CONFIGMAPS, configmap("dependent", ref(owner)))
        await client.create(CONFIGMAPS, configmap("orphan-owner", finalizers=["orphan"]))
        orphaner = await client.get(CONFIGMAPS, "default", "orphan-owner")
        await client.create(CONFIGMAPS, configmap("kept", ref(orphaner)))
        await client.delete(CONFIGMAPS, "default", "owner")
        await client.delete(CONFIGMAPS, "default", "orphan-owner")
        gc = GarbageCollector(client)
        async with running(gc):
            await settle(gc)
            assert await names(client) == {"kept"}
            kept = await client.get(CONFIGMAPS, "default", "kept")
            assert "ownerReferences" not in kept["metadata"]

    asyncio.run(main())


def test_a_pods_claims_go_with_the_pod():
    async def scenario(client, gc):
        pod = await client.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        claim = {
            "apiVersion": CLAIMS.api_version, "kind": "DeviceClaim",
            "metadata": {"name": "p-gpu-x7k2q", "namespace": "default", "ownerReferences": [ref(pod, block=True, controller=True)]},
            "spec": {"claims": [{"deviceClass": "gpu"}]},
        }
        await client.create(CLAIMS, claim)
        await client.delete(PODS, "default", "p")
        await until(lambda: get_or_none(client, CLAIMS, "p-gpu-x7k2q"), lambda c: c is None)

    run(scenario)


FOOS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.example.com"},
    "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Foo", "listKind": "FooList", "plural": "foos", "singular": "foo"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
    },
}
FOOS = Kind("example.com/v1", "Foo")


def test_kinds_served_by_crds_applied_at_run_time_own_and_are_owned():
    async def scenario(client, gc):
        await client.create(Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition"), FOOS_CRD)
        await until(lambda: asyncio.sleep(0, FOOS in gc._informers), bool)
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        foo = await client.create(FOOS, {"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "foo", "namespace": "default", "ownerReferences": [ref(owner)]}})
        await client.create(CONFIGMAPS, configmap("of-foo", ref(foo)))
        await settle(gc)
        await client.delete(CONFIGMAPS, "default", "owner")
        await settle(gc)
        assert await get_or_none(client, FOOS, "foo") is None
        assert await names(client) == set()

    run(scenario)


# ------------------------------------------------------------------- the graph alone
def test_the_graph_asks_to_check_a_dependent_whose_owner_it_has_not_seen():
    graph = Graph()
    owner_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "uid-o"}
    work = graph.upsert(CONFIGMAPS, _with_uid(configmap("d", owner_ref), "uid-d"))
    assert work == [("delete", "uid-d")]
    assert graph.upsert(CONFIGMAPS, _with_uid(configmap("o"), "uid-o")) == []
    assert graph.remove(CONFIGMAPS, {"metadata": {"name": "o", "namespace": "default"}}) == [("delete", "uid-d")]


def _with_uid(obj: dict, uid: str) -> dict:
    obj["metadata"]["uid"] = uid
    return obj


def test_served_kind_is_the_storage_version():
    crd = {"spec": {"group": "g.io", "names": {"kind": "K"}, "versions": [{"name": "v1", "served": True}, {"name": "v2", "served": True, "storage": True}]}}
    assert served_kind(crd) == Kind("g.io/v2", "K")
    assert served_kind({"spec": {"group": "g.io", "names": {"kind": "K"}, "versions": [{"name": "v1", "served": False}]}}) is None


# --------------------------------------------------------------------- properties
@st.composite
def worlds(draw):
    """Objects 0..n-1, each owned by some earlier ones (a DAG), then a few deletions with policies."""
    n = draw(st.integers(2, 8))
    owners = [sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else [] for i in range(n)]
    blocks = [[draw(st.booleans()) for _ in found] for found in owners]
    order = draw(st.permutations(range(n)))
    deletes = [(i, draw(st.sampled_from(["Background", "Foreground", "Orphan"]))) for i in order[: draw(st.integers(1, n))]]
    return n, owners, blocks, deletes


def expected(n: int, owners: list[list[int]], deletes: list[tuple[int, str]]) -> tuple[set[int], dict[int, set[int]]]:
    """kube's outcome, deletion by deletion: orphaning strips the references; otherwise a dependent
    goes once none of its owners is left."""
    alive, refs = set(range(n)), {i: set(owners[i]) for i in range(n)}
    for victim, policy in deletes:
        if victim not in alive:
            continue
        if policy == "Orphan":
            for i in alive:
                refs[i].discard(victim)
        alive.discard(victim)
        changed = True
        while changed:
            changed = False
            for i in sorted(alive):
                if refs[i] and not refs[i] & alive:
                    alive.discard(i)
                    changed = True
                elif refs[i] - alive:
                    refs[i] &= alive
    return alive, {i: refs[i] for i in alive}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_no_dependent_of_a_deleted_owner_survives_unless_orphaned_and_nothing_else_is_deleted(world):
    n, owners, blocks, deletes = world
    alive, refs = expected(n, owners, deletes)

    async def scenario(client, gc):
        made: list[dict] = []
        for i in range(n):
            made.append(await client.create(CONFIGMAPS, configmap(f"o{i}", *(ref(made[j], block=b) for j, b in zip(owners[i], blocks[i])))))
        await settle(gc)
        for victim, policy in deletes:
            if await get_or_none(client, CONFIGMAPS, f"o{victim}") is not None:
                await delete_with_policy(client, CONFIGMAPS, f"o{victim}", policy)
            await settle(gc)
        left = {obj["metadata"]["name"]: obj for obj in (await client.list(CONFIGMAPS, "default"))[0]}
        assert set(left) == {f"o{i}" for i in alive}
        for i in alive:
            assert {r["name"] for r in left[f"o{i}"]["metadata"].get("ownerReferences") or ()} == {f"o{j}" for j in refs[i]}

    run(scenario)


def test_foreground_deletes_dependents_with_dependents_of_their_own_in_the_foreground_too():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        middle = await client.create(CONFIGMAPS, configmap("middle", ref(owner, block=True)))
        await client.create(CONFIGMAPS, configmap("leaf", ref(middle, block=True)))
        await client.create(CONFIGMAPS, configmap("side", ref(owner, block=True)))
        await settle(gc)
        await delete_with_policy(client, CONFIGMAPS, "owner", "Foreground")
        await settle(gc)
        assert await names(client) == set()
        policies = {name: policy for kind, _, name, policy, _ in client.deletes}
        assert policies["middle"] == "Foreground" and policies["side"] == "Background"

    run(scenario)


def test_the_servers_own_propagation_finalizers_are_honoured():
    async def scenario(client, gc):
        owner = await client.create(CONFIGMAPS, configmap("owner"))
        await client.create(CONFIGMAPS, configmap("blocking", ref(owner, block=True), finalizers=["example.com/hold"]))
        keeper = await client.create(CONFIGMAPS, configmap("keeper"))
        await client.create(CONFIGMAPS, configmap("kept", ref(keeper)))
        await settle(gc)
        await client.delete(CONFIGMAPS, "default", "owner", propagation_policy="Foreground")
        await client.delete(CONFIGMAPS, "default", "keeper", propagation_policy="Orphan")
        await settle(gc)
        assert (await client.get(CONFIGMAPS, "default", "owner"))["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert "ownerReferences" not in (await client.get(CONFIGMAPS, "default", "kept"))["metadata"]
        await client.patch(CONFIGMAPS, "default", "blocking", {"metadata": {"finalizers": None}})
        await settle(gc)
        assert await names(client) == {"kept"}

    run(scenario)


@pytest.mark.e2e
def test_over_http_with_kubeclient_the_collector_and_the_delete_options_work_the_same(make_live):
    from mockapi.client import KubeClient

    server = make_live()
    kube = KubeClient.from_kubeconfig(str(server.kubeconfig))

    async def main():
        gc = GarbageCollector(kube)
        async with running(gc):
            owner = await kube.create(CONFIGMAPS, configmap("owner"))
            await kube.create(CONFIGMAPS, configmap("dependent", ref(owner)))
            keeper = await kube.create(CONFIGMAPS, configmap("keeper"))
            await kube.create(CONFIGMAPS, configmap("kept", ref(keeper)))
            await kube.delete(CONFIGMAPS, "default", "keeper", propagation_policy="Orphan")
            await kube.delete(CONFIGMAPS, "default", "owner", propagation_policy="Background", grace_period_seconds=0)
            await until(lambda: names(kube), lambda found: found == {"kept"})
            kept = await until(lambda: kube.get(CONFIGMAPS, "default", "kept"), lambda k: "ownerReferences" not in k["metadata"])
            assert "finalizers" not in kept["metadata"]

    try:
        asyncio.run(main())
    finally:
        kube.close()
