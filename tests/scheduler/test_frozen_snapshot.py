"""A cycle that awaits an extender reads the snapshot as it was when the cycle began (kube's
per-cycle snapshot): ``Snapshot.freeze`` gives it a view, and the live snapshot, which the
informers go on changing, copies a NodeInfo the view shares before its first change."""

import asyncio

from hypothesis import given, settings, strategies as st

from mockapi.controllers.scheduler import pods as pods_
from mockapi.controllers.scheduler.framework import CycleState, Framework, ScheduleResult, Snapshot
from tests.scheduler.builders import node, pod
from tests.scheduler.extender_server import ExtenderServer, node_names
from tests.scheduler.test_extenders import framework


def picture(snapshot: Snapshot) -> dict:
    """What a cycle can read of a snapshot, as plain values."""
    return {
        "infos": {
            name: (info.node, sorted(info.pods), dict(info.requested), dict(info.non_zero_requested), info.allocatable, info.generation)
            for name, info in snapshot.by_name.items()
        },
        "listed": [info.name for info in snapshot.node_infos()],
        "pod_node": dict(snapshot.pod_node),
        "nominated": {key: node_name for key, (_, node_name) in snapshot.nominated.items()},
    }


def cluster() -> Snapshot:
    return Snapshot([node("a"), node("b", labels={"zone": "1"}), node("c")], [pod("x", cpu="1", node_name="a"), pod("y", cpu="2", node_name="b")])


def test_a_view_keeps_the_snapshot_as_it_was_while_the_live_one_changes():
    live = cluster()
    before = picture(live)
    shared = dict(live.by_name)
    view = live.freeze()
    live.set_node(node("b", labels={"zone": "2"}))
    live.add_pod(pod("z", cpu="1", node_name="c"))
    live.remove_pod(pods_.key(pod("x")))
    live.remove_node("a")
    live.set_node(node("d"))
    live.nominate(pod("n"), "c")
    assert picture(view) == before
    assert all(view.by_name[name] is info for name, info in shared.items())  # shared, never changed in place
    now = picture(live)
    assert now["listed"] == ["b", "c", "d"] and now["pod_node"] == {"default/y": "b", "default/z": "c"}
    assert now["infos"]["b"][0]["metadata"]["labels"]["zone"] == "2" and "default/n" in now["nominated"]
    assert live.by_name["c"] is not shared["c"]  # copied at its first change


def test_after_the_thaw_the_live_snapshot_changes_its_node_infos_in_place_again():
    live = cluster()
    view = live.freeze()
    live.add_pod(pod("z", cpu="1", node_name="c"))
    copied = live.by_name["c"]
    live.add_pod(pod("w", cpu="1", node_name="c"))
    assert live.by_name["c"] is copied  # one copy per view, not one per change
    live.thaw(view)
    info = live.by_name["b"]
    live.add_pod(pod("v", cpu="1", node_name="b"))
    assert live.by_name["b"] is info


def test_two_views_each_keep_their_own_moment():
    live = cluster()
    first = live.freeze()
    live.add_pod(pod("z", cpu="1", node_name="c"))
    at_second = picture(live)
    second = live.freeze()
    live.thaw(first)
    live.add_pod(pod("w", cpu="1", node_name="c"))
    live.remove_node("b")
    assert picture(second) == at_second
    assert sorted(first.by_name["c"].pods) == []


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set_node"), st.sampled_from("abcd"), st.sampled_from(["1", "2", "8"])),
        st.tuples(st.just("remove_node"), st.sampled_from("abcd"), st.none()),
        st.tuples(st.just("add_pod"), st.sampled_from("pqrs"), st.sampled_from("abcd")),
        st.tuples(st.just("remove_pod"), st.sampled_from("pqrs"), st.none()),
        st.tuples(st.just("freeze"), st.none(), st.none()),
        st.tuples(st.just("thaw"), st.none(), st.none()),
    ),
    max_size=30,
)


def apply(snapshot: Snapshot, op, arg, value) -> None:
    if op == "set_node":
        snapshot.set_node(node(arg, cpu=value))
    elif op == "remove_node":
        snapshot.remove_node(arg)
    elif op == "add_pod":
        snapshot.add_pod(pod(arg, cpu="1", node_name=value))
    elif op == "remove_pod":
        snapshot.remove_pod(pods_.key(pod(arg)))


def without_generations(p: dict) -> dict:
    return {**p, "infos": {name: values[:-1] for name, values in p["infos"].items()}}


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_views_never_change_and_the_live_snapshot_ends_as_one_never_frozen(ops):
    live, plain = cluster(), cluster()
    views: list[tuple[Snapshot, dict]] = []
    for op, arg, value in ops:
        if op == "freeze":
            views.append((live.freeze(), picture(live)))
        elif op == "thaw":
            if views:
                live.thaw(views.pop(0)[0])
        else:
            apply(live, op, arg, value)
            apply(plain, op, arg, value)
        for view, seen in views:
            assert picture(view) == seen
    assert without_generations(picture(live)) == without_generations(picture(plain))


# ------------------------------------------------------------------------------ with an extender
def test_what_changes_during_an_extender_call_is_not_what_the_cycle_scores_but_is_where_the_pod_is_assumed():
    """The informers change the live snapshot while the filter call is out: node "a" gets a busy
    pod, "c" goes away. The cycle scores the nodes as they were when it began (as it would
    without the changes) and assumes the pod in the live snapshot."""
    live = Snapshot([node("a"), node("b", cpu="2"), node("c", cpu="8")])

    def changing(body):
        live.add_pod(pod("busy", cpu="3", node_name="a"))
        live.remove_node("c")
        return {"NodeNames": node_names(body), "FailedNodes": {}, "Error": ""}

    def keeping(body):
        return {"NodeNames": node_names(body), "FailedNodes": {}, "Error": ""}

    async def cycle(fwk: Framework, snapshot: Snapshot):
        try:
            return await fwk.run_scheduling_cycle(CycleState(), pod("p", cpu="1"), snapshot)
        finally:
            await fwk.aclose()

    unchanged = Snapshot([node("a"), node("b", cpu="2"), node("c", cpu="8")])
    with ExtenderServer({"filter": keeping}) as ext:
        expected, _ = asyncio.run(cycle(framework({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}), unchanged))
    with ExtenderServer({"filter": changing}) as ext:
        result, status = asyncio.run(cycle(framework({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}), live))
    assert isinstance(result, ScheduleResult) and status.success
    assert (result.node, result.scores) == (expected.node, expected.scores) and result.node == "c"
    assert live.pod_node == {"default/busy": "a", "default/p": "c"}  # the pod is assumed in the live snapshot, beside the change
    assert [info.name for info in live.node_infos()] == ["a", "b"] and "c" in live.by_name  # a ghost: node gone, its pod still counted
