"""The store keeps objects compressed (Packed): same bytes, same facts, same watch events as plain records."""

import copy
import os
import pickle

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi.errors import GroupResource, StatusError
from mockapi.store import Store, Stored
from mockapi.store import packing
from mockapi.store.watch import Packed

PODS = GroupResource("", "pods")
CONFIGMAPS = GroupResource("", "configmaps")


def pod(name, namespace="default", *, image="registry.example.com/team/app:1.0", extra="", **labels):
    """A pod of a few hundred bytes to a few KB, mostly the same from one name to the next."""
    meta = {"name": name, "namespace": namespace, "labels": labels or {"app": "web"}, "annotations": {"note": extra}}
    containers = [{"name": f"c{i}", "image": image, "env": [{"name": f"VAR_{i}_{k}", "value": f"value-{k}"} for k in range(8)]} for i in range(3)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers, "restartPolicy": "Always"}}


def small(name, namespace="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": {"a": "b"}}


def name_index(obj):
    return (obj["metadata"]["name"],)


def test_a_stored_pod_is_kept_packed_and_reads_back_as_the_plain_record():
    store = Store(plain_writes=0)
    written = store.create(PODS, pod("a", tier="web"), fields=name_index)
    kept = store.get(PODS, "default", "a")
    assert type(written) is Stored and type(kept) is Packed
    assert len(kept.blob) * 5 < len(written.raw)
    assert kept.raw == written.raw and kept.rv == written.rv == 1
    assert (kept.namespace, kept.name, kept.labels, kept.fields) == ("default", "a", {"tier": "web"}, ("a",))
    assert kept.load() == written.load() == orjson.loads(written.raw)
    assert kept == written and written == kept and not (kept != written)


def test_copy_pickle_and_replace_give_plain_records_of_the_same_version():
    store = Store(plain_writes=0)
    store.create(PODS, pod("a"))
    kept = store.get(PODS, "default", "a")
    for again in (copy.copy(kept), copy.deepcopy(kept), pickle.loads(pickle.dumps(kept))):
        assert type(again) is Stored and again == kept and again.raw == kept.raw and again.rv == kept.rv
    other = kept._replace(raw=b'{"x":1}')
    assert type(other) is Stored and other.raw == b'{"x":1}' and other.rv == kept.rv and other.name == "a"
    assert "Stored(raw=" in repr(kept)


def test_small_objects_stay_plain_and_do_not_make_a_dictionary():
    store = Store(plain_writes=0)
    store.create(CONFIGMAPS, small("a"))
    assert type(store.get(CONFIGMAPS, "default", "a")) is Stored
    assert CONFIGMAPS not in store._packer.dictionaries


def test_incompressible_bytes_stay_plain():
    store = Store(plain_writes=0)
    store.create(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d", "namespace": "default"}, "data": {"x": "y" * 4000}})
    store.create(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r", "namespace": "default"},
                              "binaryData": {"x": __import__("base64").b64encode(os.urandom(4000)).decode()}})
    assert type(store.get(CONFIGMAPS, "default", "d")) is Packed
    assert type(store.get(CONFIGMAPS, "default", "r")) is Stored  # random data: no smaller by the margin


def test_compression_off_keeps_plain_records():
    store = Store(compression=False)
    store.create(PODS, pod("a"))
    store.update(PODS, pod("a", extra="x"))
    assert type(store.get(PODS, "default", "a")) is Stored
    assert all(type(event.obj) is Stored for event in store._history)


def test_the_dictionary_is_replaced_after_a_poor_streak_and_old_records_still_read():
    store = Store(plain_writes=0)
    store.create(PODS, pod("first"))
    first = store._packer.dictionaries[PODS].raw
    old = store.get(PODS, "default", "first")
    # objects unlike the dictionary: half of each is random hex
    # (each its own label set: a scope's misses would give the scope its own dictionary first)
    unlike = [pod(f"u{i}", extra=os.urandom(1500).hex(), image=os.urandom(8).hex(), app=f"u{i}") for i in range(packing.POOR_STREAK)]
    for body in unlike:
        store.create(PODS, body)
    assert store._packer.dictionaries[PODS].raw is not first
    assert old.dictionary is first and old.raw == store.get(PODS, "default", "first").raw
    for i in range(packing.POOR_STREAK):
        assert orjson.loads(store.get(PODS, "default", f"u{i}").raw)["metadata"]["name"] == f"u{i}"
    assert store.get(PODS, "default", "first").load()["metadata"]["name"] == "first"


def test_objects_of_one_label_set_unlike_the_dictionary_get_their_own():
    store = Store(plain_writes=0)
    store.create(PODS, pod("first"))
    first = store._packer.dictionaries[PODS].raw
    unlike = [pod(f"t{i}", extra="z" * 300, image="quay.io/other/thing:9.9", tier="db") for i in range(packing.SCOPE_MISSES + 3)]
    for body in unlike:
        body["spec"]["containers"][0]["env"] = [{"name": f"OTHER_{k}", "value": "x" * 40 + str(k)} for k in range(30)]
        store.create(PODS, body)
    kept = [store.get(PODS, "default", f"t{i}") for i in range(len(unlike))]
    assert all(k.dictionary is first for k in kept[:packing.SCOPE_MISSES - 1])
    own = kept[packing.SCOPE_MISSES - 1].dictionary
    assert own is not first and all(k.dictionary is own for k in kept[packing.SCOPE_MISSES:])
    assert all(len(k.blob) < len(kept[0].blob) for k in kept[packing.SCOPE_MISSES:])
    assert store._packer.dictionaries[PODS].raw is first  # the resource's stays
    assert [k.load()["metadata"]["name"] for k in kept] == [f"t{i}" for i in range(len(unlike))]


def test_the_history_refers_to_packed_records_and_watchers_get_the_plain_bytes():
    store = Store(plain_writes=0)
    watcher = store.watch(PODS, since=0)
    written = [store.create(PODS, pod("a")), store.update(PODS, pod("a", extra="1")), store.delete(PODS, "default", "a")]
    events = list(store._history)
    assert [type(e.obj) for e in events] == [Packed] * 3
    assert type(events[1].prev) is Packed and events[1].prev.raw == written[0].raw
    assert all(e._lines is None for e in events)  # the lines built for the fan-out are not kept
    got = [orjson.loads(line) for line in watcher.take().splitlines()]
    assert [e["object"] for e in got] == [orjson.loads(w.raw) for w in written]
    # a resume builds the same lines from the packed records
    again = store.watch(PODS, since=0)
    assert [orjson.loads(line)["object"] for line in again.take().splitlines()] == [orjson.loads(w.raw) for w in written]


def test_restore_packs_and_snapshots_read_packed_records():
    store = Store(plain_writes=0)
    raw = orjson.dumps({**pod("a"), "metadata": {**pod("a")["metadata"], "resourceVersion": "7"}})
    store.restore(PODS, raw, 7, "default", "a", labels={"app": "web"}, fields=None)
    kept = store.get(PODS, "default", "a")
    assert type(kept) is Packed and kept.raw == raw and kept.rv == 7
    store.resume(7)
    store.update(PODS, pod("a", extra="x"))
    assert [s.raw for s in store.snapshot(PODS, None, 7)] == [raw]


def test_drop_resource_forgets_the_dictionary():
    store = Store(plain_writes=0)
    store.create(PODS, pod("a"))
    store.drop_resource(PODS)
    assert PODS not in store._packer.dictionaries


# --- the same operations on a packing store and a plain one: byte-identical reads ---------------

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
OPS = st.lists(
    st.tuples(st.sampled_from(["create", "update", "delete"]), NAMES, st.sampled_from(["ns1", "ns2"]),
              st.sampled_from(["", "x" * 40, "note", "y" * 2000]), st.sampled_from(["web", "db"]), st.booleans()),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_a_packing_store_reads_byte_identical_to_a_plain_one(ops):
    """Packing at once, and packing the writes older than the last two (young records replaced,
    deleted, aged out), against plain records."""
    stores = [Store(plain_writes=0), Store(plain_writes=2), Store(compression=False)]
    watchers = [s.watch(PODS) for s in stores]
    selective = [s.watch(PODS, predicate=lambda stored: (stored.labels or {}).get("app") == "web") for s in stores]
    for op, name, namespace, extra, app, big in ops:
        body = (lambda: pod(name, namespace, extra=extra, app=app)) if big else (lambda: small(name, namespace) | {"metadata": {"name": name, "namespace": namespace, "labels": {"app": app}}})
        outcomes = []
        for store in stores:
            try:
                if op == "create":
                    outcomes.append(store.create(PODS, body(), fields=name_index).raw)
                elif op == "update":
                    outcomes.append(store.update(PODS, body(), fields=name_index).raw)
                else:
                    outcomes.append(store.delete(PODS, namespace, name).raw)
            except StatusError as exc:
                outcomes.append(exc.code)
        assert outcomes[0] == outcomes[1] == outcomes[2]
    *packing, plain = stores
    for packed in packing:
        for namespace in (None, "ns1", "ns2"):
            assert [s.raw for s in packed.iterate(PODS, namespace)] == [s.raw for s in plain.iterate(PODS, namespace)]
            for rv in range(0, packed.resource_version + 1, 3):
                assert [s.raw for s in packed.snapshot(PODS, namespace, rv)] == [s.raw for s in plain.snapshot(PODS, namespace, rv)]
        for name in ("a", "b"):
            one, other = packed.get(PODS, "ns1", name), plain.get(PODS, "ns1", name)
            assert (one is None and other is None) or (one.raw == other.raw and one.rv == other.rv and one.labels == other.labels and one.fields == other.fields)
    lines = [w.take() for w in watchers]
    assert lines[0] == lines[1] == lines[2]
    lines = [w.take() for w in selective]
    assert lines[0] == lines[1] == lines[2]
    resumed = [s.watch(PODS, since=0, initial=False).take() for s in stores]
    assert resumed[0] == resumed[1] == resumed[2]
    initial = [s.watch(PODS, initial=True).take() for s in stores]
    assert initial[0] == initial[1] == initial[2]


def test_the_last_writes_stay_plain_until_they_age_out():
    store = Store(plain_writes=2)
    watcher = store.watch(PODS)
    for name in ("a", "b"):
        store.create(PODS, pod(name))
    assert [type(store.get(PODS, "default", n)) for n in ("a", "b")] == [Stored, Stored]
    obj = store.get(PODS, "default", "a").load()
    obj["metadata"]["labels"] = {"app": "api"}
    written = store.update(PODS, obj)  # a young object written again: never packed in between
    assert store.get(PODS, "default", "a") is written
    store.create(PODS, pod("c"))  # three young writes: the oldest (b) ages out
    assert type(store.get(PODS, "default", "b")) is Packed
    assert [type(store.get(PODS, "default", n)) for n in ("a", "c")] == [Stored, Stored]
    history = list(store._history)
    assert type(history[1].obj) is Packed and history[1].obj.name == "b"  # the history refers to the packed twin
    assert type(history[0].obj) is Stored  # a's first version, replaced while young: kept plain
    store.delete(PODS, "default", "c")
    store.create(PODS, pod("d"))
    assert type(store.get(PODS, "default", "a")) is Packed
    assert store.get(PODS, "default", "a").raw == written.raw
    assert len(watcher.take().splitlines()) == 6  # every write reached the watcher once


def test_the_flag_turns_compression_off():
    from mockapi import app, cli

    parse = cli._parser().parse_args
    assert cli._settings(parse(["serve"])).store_compression is True
    off = cli._settings(parse(["serve", "--no-store-compression"]))
    assert off.store_compression is False
    assert app.build(off).store.compression is False


def test_the_environment_turns_compression_off_and_a_bad_value_is_one_line(monkeypatch, capsys):
    from mockapi import cli

    monkeypatch.setenv("MOCKAPI_STORE_COMPRESSION", "false")
    assert cli._settings(cli._parser().parse_args(["serve"])).store_compression is False
    assert cli._settings(cli._parser().parse_args(["serve", "--store-compression"])).store_compression is True
    monkeypatch.setenv("MOCKAPI_STORE_COMPRESSION", "maybe")
    assert cli.main(["serve", "--port", "0"]) == 2
    assert capsys.readouterr().err == "mockapi serve: MOCKAPI_STORE_COMPRESSION: expected true or false, not 'maybe'\n"


def test_recent_reads_keep_only_what_the_store_holds():
    """The bytes of recent reads are dropped when the store replaces or deletes the record:
    create/delete cycles must not leave up to RECENT_BYTES of gone objects behind."""
    from mockapi.store.watch import recent

    store = Store(plain_writes=0)
    store.create(PODS, pod("a"))
    first = store.get(PODS, "default", "a")
    assert first.raw and id(first) in recent.entries
    obj = first.load()
    obj["metadata"]["labels"] = {"app": "api"}
    store.update(PODS, obj)
    assert id(first) not in recent.entries
    second = store.get(PODS, "default", "a")
    assert second.raw and id(second) in recent.entries
    store.delete(PODS, "default", "a")
    assert id(second) not in recent.entries
    assert first.raw == first.raw and second.load()["metadata"]["labels"] == {"app": "api"}  # still readable
