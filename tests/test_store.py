"""The versioned store: resourceVersions, history window, snapshots, watch fan-out and bounds."""

import asyncio
import copy
import gc
import pickle

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi import errors
from mockapi.errors import GroupResource
from mockapi.store import ADDED, DELETED, MODIFIED, Store, Stored

PODS = GroupResource("", "pods")
NODES = GroupResource("", "nodes")


def obj(name, namespace="default", **labels):
    meta = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def lines(watcher):
    return [orjson.loads(line) for line in watcher.take().splitlines()]


def test_every_write_gets_a_strictly_greater_resource_version_stored_as_a_string():
    store = Store()
    a = store.create(PODS, obj("a"))
    b = store.update(PODS, obj("a"))
    c = store.delete(PODS, "default", "a")
    assert a.rv < b.rv < c.rv
    assert orjson.loads(b.raw)["metadata"]["resourceVersion"] == str(b.rv)


def test_create_of_an_existing_object_is_already_exists_and_changes_nothing():
    store = Store()
    store.create(PODS, obj("a"))
    with pytest.raises(errors.StatusError) as caught:
        store.create(PODS, obj("a"))
    assert caught.value.code == 409 and caught.value.reason == "AlreadyExists"
    assert store.resource_version == 1


def test_iterate_lists_in_namespace_then_name_order_and_resumes_after_a_key():
    store = Store()
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y"), ("b", "a")]:
        store.create(PODS, obj(name, ns))
    assert [(s.namespace, s.name) for s in store.iterate(PODS)] == [("a", "y"), ("a", "z"), ("b", "a"), ("b", "x")]
    assert [(s.namespace, s.name) for s in store.iterate(PODS, after=("a", "z"))] == [("b", "a"), ("b", "x")]
    assert [s.name for s in store.iterate(PODS, "b")] == ["a", "x"]


def test_snapshot_reconstructs_the_state_at_an_older_resource_version():
    store = Store()
    store.create(PODS, obj("a", app="1"))
    store.create(PODS, obj("b"))
    rv = store.resource_version
    store.update(PODS, obj("a", app="2"))
    store.delete(PODS, "default", "b")
    store.create(PODS, obj("c"))
    old = store.snapshot(PODS, None, rv)
    assert [(s.name, s.labels) for s in old] == [("a", {"app": "1"}), ("b", None)]


def test_snapshot_and_watch_from_a_version_outside_the_history_window_are_410_expired():
    store = Store(history_size=3)
    for i in range(6):
        store.create(PODS, obj(f"p{i}"))
    with pytest.raises(errors.StatusError) as caught:
        store.watch(PODS, since=1)
    assert caught.value.code == 410 and caught.value.reason == "Expired"
    assert "too old resource version: 1 (3)" == caught.value.message
    with pytest.raises(errors.StatusError):
        store.snapshot(PODS, None, 2)
    watcher = store.watch(PODS, since=3)
    assert [e["object"]["metadata"]["name"] for e in lines(watcher)] == ["p3", "p4", "p5"]


def test_watch_from_a_version_replays_only_later_events_of_that_resource():
    store = Store()
    store.create(PODS, obj("a"))
    start = store.resource_version
    store.create(NODES, {"metadata": {"name": "n"}})
    store.update(PODS, obj("a"))
    watcher = store.watch(PODS, since=start)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines(watcher)] == [(MODIFIED, "a")]


def test_initial_watch_sends_synthetic_added_then_live_events():
    store = Store()
    store.create(PODS, obj("a"))
    watcher = store.watch(PODS, initial=True)
    store.create(PODS, obj("b"))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines(watcher)] == [(ADDED, "a"), (ADDED, "b")]


def test_an_object_leaving_the_selector_is_deleted_for_the_watcher_with_its_previous_content():
    store = Store()
    store.create(PODS, obj("a", tier="gold"))
    watcher = store.watch(PODS, predicate=lambda s: (s.labels or {}).get("tier") == "gold")
    store.update(PODS, obj("a", tier="silver"))
    store.update(PODS, obj("a", tier="gold"))
    events = lines(watcher)
    assert [e["type"] for e in events] == [DELETED, ADDED]
    assert events[0]["object"]["metadata"]["labels"] == {"tier": "gold"}
    assert events[0]["object"]["metadata"]["resourceVersion"] == "2"


def test_each_event_is_serialized_once_and_shared_by_all_watchers():
    store = Store()
    first, second = store.watch(PODS), store.watch(PODS)
    store.create(PODS, obj("a"))
    assert first.pending[0] is second.pending[0]


def test_a_watcher_that_falls_behind_is_marked_overflowed_and_holds_no_backlog():
    store = Store(watcher_buffer=5)
    watcher = store.watch(PODS)
    for i in range(20):
        store.create(PODS, obj(f"p{i}"))
    assert watcher.overflowed and watcher.pending == []


def test_stopped_watchers_are_deregistered():
    store = Store()
    watchers = [store.watch(PODS) for _ in range(1000)]
    assert store.watcher_count() == 1000
    for watcher in watchers:
        store.stop(watcher)
    assert store.watcher_count() == 0


def test_wakeup_is_set_by_an_offer_and_cleared_by_take():
    async def scenario():
        store = Store()
        watcher = store.watch(PODS)
        store.create(PODS, obj("a"))
        await asyncio.wait_for(watcher.wakeup.wait(), 1)
        assert watcher.take()
        assert not watcher.wakeup.is_set()

    asyncio.run(scenario())


# ------------------------------------------------------------------------- properties
names = st.sampled_from(["a", "b", "c", "d"])
namespaces = st.sampled_from(["x", "y"])
operations = st.lists(
    st.tuples(st.sampled_from(["put", "delete", "checkpoint"]), namespaces, names, st.sampled_from(["1", "2"])),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(operations, st.integers(min_value=3, max_value=60))
def test_list_then_watch_from_the_list_version_reconstructs_exactly_the_store(ops, history):
    """RVs strictly increase; a snapshot at any retained RV plus the watch from it equals the
    current state; no event is lost or duplicated."""
    store = Store(history_size=history)
    checkpoints = []
    last_rv = 0
    for op, ns, name, label in ops:
        if op == "checkpoint":
            checkpoints.append(store.resource_version)
            continue
        exists = store.get(PODS, ns, name) is not None
        if op == "put":
            stored = (store.update if exists else store.create)(PODS, obj(name, ns, v=label))
        elif exists:
            stored = store.delete(PODS, ns, name)
        else:
            continue
        assert stored.rv > last_rv
        last_rv = stored.rv
    current = {(s.namespace, s.name): s.raw for s in store.iterate(PODS)}
    for rv in checkpoints + [0]:
        if rv < store.oldest_resource_version:
            with pytest.raises(errors.StatusError):
                store.snapshot(PODS, None, rv)
            continue
        state = {(s.namespace, s.name): s.raw for s in store.snapshot(PODS, None, rv)}
        watcher = store.watch(PODS, since=rv)
        seen = set()
        for event in lines(watcher):
            meta = event["object"]["metadata"]
            key = (meta["namespace"], meta["name"])
            assert meta["resourceVersion"] not in seen
            seen.add(meta["resourceVersion"])
            if event["type"] == DELETED:
                assert key in state
                del state[key]
            else:
                assert (key in state) == (event["type"] == MODIFIED)
                state[key] = orjson.dumps(event["object"])
        store.stop(watcher)
        assert {k: orjson.loads(v) for k, v in state.items()} == {k: orjson.loads(v) for k, v in current.items()}


# ------------------------------------------------------------ the record kept per object (docs/memory.md)
def test_a_stored_object_keeps_bytes_name_shared_namespace_and_labels_and_fields_and_reads_its_version_from_the_bytes():
    store = Store()
    a = store.create(PODS, obj("a", app="web"))
    b = store.create(PODS, obj("b", app="web"))
    assert (a.raw, a.namespace, a.name, a.labels, a.fields) == (a[0], "default", "a", {"app": "web"}, None)
    assert len(a) == 4 and a.rv == int(orjson.loads(a.raw)["metadata"]["resourceVersion"])  # no int kept beside the bytes
    assert a.scope is b.scope  # one (namespace, labels) for both
    assert not gc.is_tracked(a)
    assert store.get(PODS, "default", "a") is a and a.load() == orjson.loads(a.raw)


def test_a_version_the_bytes_do_not_say_first_is_kept_beside_them():
    store = Store()
    event = {"apiVersion": "v1", "kind": "Event", "involvedObject": {"kind": "Pod", "resourceVersion": "999"}, "metadata": {"name": "e", "namespace": "default"}}
    stored = store.create(GroupResource("", "events"), event)
    assert len(stored) == 5 and stored.rv == 1 and store.resource_version == 1
    built = Stored(b'{"metadata":{"name":"x"}}', 7, "ns", "x", None, ("v",))  # bytes without a resourceVersion, as tests build them
    assert (built.rv, built.namespace, built.name, built.labels, built.fields) == (7, "ns", "x", None, ("v",))


def test_replacing_the_bytes_keeps_version_name_and_the_rest():
    store = Store()
    a = store.create(PODS, obj("a", app="web"))
    other = a._replace(raw=b'{"apiVersion":"v2"}')
    assert (other.raw, other.rv, other.namespace, other.name, other.labels) == (b'{"apiVersion":"v2"}', a.rv, "default", "a", {"app": "web"})
    assert a == store.get(PODS, "default", "a") and "rv=1" in repr(a)
    assert copy.deepcopy(a) == a == pickle.loads(pickle.dumps(a)) and type(copy.copy(a)) is Stored


def test_events_carry_their_resource_version():
    store = Store()
    watcher = store.watch(PODS)
    store.create(PODS, obj("a"))
    store.delete(PODS, "default", "a")
    assert [e.rv for e in store.events_since(PODS, 0)] == [1, 2]
    assert [line["object"]["metadata"]["resourceVersion"] for line in lines(watcher)] == ["1", "2"]


def test_a_buckets_stamp_changes_with_every_create_update_delete_and_restore_of_its_objects():
    store = Store()
    stamps = [store.stamp(PODS, "default")]
    store.create(PODS, obj("a"))
    stamps.append(store.stamp(PODS, "default"))
    store.create(PODS, obj("other", namespace="elsewhere"))
    assert store.stamp(PODS, "default") == stamps[-1]  # another namespace's bucket
    store.update(PODS, obj("a", app="web"))
    stamps.append(store.stamp(PODS, "default"))
    store.delete(PODS, "default", "a")
    stamps.append(store.stamp(PODS, "default"))
    store.restore(PODS, store.get(PODS, "elsewhere", "other").raw, 9, "default", "b", labels=None, fields=None)
    stamps.append(store.stamp(PODS, "default"))
    assert stamps[0] == 0 and len(set(stamps)) == len(stamps) and store.stamp(NODES) == 0
    store.drop_resource(PODS)
    assert store.stamp(PODS, "default") == 0
