"""The journal (mockapi.store.journal) and the restart path (mockapi.persistence), in-process."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors, persistence
from mockapi.registry.options import ListOptions, WriteOptions
from mockapi.settings import Settings
from mockapi.store import Store
from mockapi.store import journal as journal_
from mockapi.store.journal import DATABASE, Journal, JournaledStore, JournalError

CONFIGMAPS = errors.GroupResource("", "configmaps")
ROOT = Path(__file__).resolve().parent.parent


def configmap(name: str, namespace: str = "default", **data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def stored_rows(directory) -> dict:
    journal = Journal(directory)
    try:
        return {(r.namespace, r.name): orjson.loads(r.raw) for r in journal.rows()}
    finally:
        journal.close()


@pytest.fixture
def journaled(tmp_path):
    journal = Journal(tmp_path)
    journal.start()
    store = JournaledStore(journal)
    yield journal, store
    journal.close()


def test_every_write_is_in_the_journal_after_a_sync_and_a_delete_removes_its_row(tmp_path, journaled):
    journal, store = journaled
    store.create(CONFIGMAPS, configmap("a", x="1"))
    store.create(CONFIGMAPS, configmap("b"))
    store.update(CONFIGMAPS, configmap("a", x="2"))
    store.delete(CONFIGMAPS, "default", "b")
    journal.sync()
    journal.close()
    rows = stored_rows(tmp_path)
    assert list(rows) == [("default", "a")]
    assert rows[("default", "a")]["data"] == {"x": "2"} and rows[("default", "a")]["metadata"]["resourceVersion"] == "3"


def test_the_resource_version_continues_after_the_last_write_even_when_it_was_a_delete(tmp_path, journaled):
    journal, store = journaled
    store.create(CONFIGMAPS, configmap("a"))
    store.delete(CONFIGMAPS, "default", "a")
    journal.close()
    reopened = Journal(tmp_path)
    assert reopened.resource_version == 2 and list(reopened.rows()) == []
    reopened.close()


def crash(journal: Journal) -> None:
    """Stop as kill -9 would: what is on disk stays, nothing more is written, the lock goes."""
    journal.sync()
    journal._db.close()
    os.close(journal._lock_fd)
    journal._lock_fd = -1  # closed: close() has nothing left to do


def test_after_a_crash_the_sequence_skips_ahead_so_versions_shown_but_never_written_are_older(tmp_path, journaled):
    journal, store = journaled
    store.create(CONFIGMAPS, configmap("a"))
    crash(journal)
    server = app_.build(Settings(data_dir=tmp_path))
    try:
        assert not server.journal.clean
        assert server.store.oldest_resource_version == 1 + persistence.CRASH_GAP
        assert server.store.get(CONFIGMAPS, "default", "a").rv == 1
        last = server.store.resource_version  # with the seed written after the gap
    finally:
        server.journal.close()
    again = app_.build(Settings(data_dir=tmp_path))  # after a clean stop: no gap
    try:
        assert again.journal.clean and again.store.resource_version == last
    finally:
        again.journal.close()


def test_writes_of_one_event_loop_turn_are_one_transaction_and_the_response_waits_for_it(tmp_path, journaled):
    journal, store = journaled

    async def turn():
        for i in range(150):  # more rows than one INSERT statement carries
            store.create(CONFIGMAPS, configmap(f"cm-{i}"))
        assert journal.durable_rv < store.resource_version  # nothing handed over inside the turn
        await journal.durable(store.resource_version)
        assert journal.durable_rv == store.resource_version

    before = journal.batches
    asyncio.run(turn())
    assert journal.batches == before + 1
    journal.close()
    assert len(stored_rows(tmp_path)) == 150


def test_a_write_that_cannot_be_made_durable_is_a_500_and_so_is_every_later_one(journaled):
    journal, store = journaled
    journal._db.close()  # as a disk that went away would: every statement fails

    async def write():
        store.create(CONFIGMAPS, configmap("a"))
        await journal.durable(store.resource_version)

    for attempt in (write, lambda: journal.durable(store.resource_version)):
        with pytest.raises(errors.StatusError) as failed:
            asyncio.run(attempt())
        assert failed.value.code == 500 and "could not be made durable" in failed.value.message


def test_a_second_process_on_the_same_directory_is_refused(tmp_path, journaled):
    with pytest.raises(JournalError, match="in use by another mockapi"):
        Journal(tmp_path)


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    (tmp_path / DATABASE).write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(JournalError, match="not a mockapi data directory, or damaged"):
        Journal(tmp_path)
    (tmp_path / DATABASE).unlink()
    Journal(tmp_path).close()  # the refusal released the lock


def test_a_database_of_a_newer_format_is_refused(tmp_path):
    Journal(tmp_path).close()
    db = sqlite3.connect(tmp_path / DATABASE)
    db.execute("UPDATE meta SET value = 99 WHERE key = 'format'")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="format 99"):
        Journal(tmp_path)


def test_compaction_gives_the_space_of_deleted_objects_back(tmp_path, journaled):
    journal, store = journaled
    payload = "x" * 2000
    for i in range(2000):
        store.create(CONFIGMAPS, configmap(f"cm-{i}", blob=payload))
    journal.compact()
    full = journal.sizes()
    assert full[DATABASE] > 4_000_000 and full[DATABASE + "-wal"] == 0
    for i in range(2000):
        store.delete(CONFIGMAPS, "default", f"cm-{i}")
    journal.compact()
    empty = journal.sizes()
    assert empty[DATABASE] < 200_000 and empty[DATABASE + "-wal"] == 0


def test_a_restored_store_continues_the_sequence_and_answers_older_versions_with_410():
    store = Store()
    obj = configmap("a")
    obj["metadata"]["resourceVersion"] = "7"
    store.restore(CONFIGMAPS, orjson.dumps(obj), 7, "default", "a", labels=None, fields=None)
    store.resume(9)
    assert store.get(CONFIGMAPS, "default", "a").rv == 7
    with pytest.raises(errors.StatusError) as expired:
        store.watch(CONFIGMAPS, since=8)
    assert expired.value.code == 410
    store.watch(CONFIGMAPS, since=9)  # the current version: nothing missed, nothing to replay
    assert store.create(CONFIGMAPS, configmap("b")).rv == 10


def _crd(plural: str, kind: str) -> dict:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": f"{plural}.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}]},
    }  # fmt: skip


def test_a_restart_restores_objects_serves_stored_crds_and_continues_the_resource_version(tmp_path):
    server = app_.build(Settings(data_dir=tmp_path))
    registry = server.registry
    crds = registry.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    registry.create(crds, "", _crd("widgets", "Widget"), WriteOptions())
    widgets = registry.types.by_kind("example.com", "v1", "Widget")
    registry.create(widgets, "default", {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}, WriteOptions())
    configmaps = registry.types.by_kind("", "v1", "ConfigMap")
    registry.create(configmaps, "default", configmap("c", a="b"), WriteOptions())
    before = {(s.namespace, s.name): (s.rv, s.raw) for rt in (widgets, configmaps) for s in registry.store.iterate(rt.group_resource)}
    last = registry.store.resource_version
    server.journal.close()

    again = app_.build(Settings(data_dir=tmp_path))
    try:
        registry = again.registry
        widgets = registry.types.by_kind("example.com", "v1", "Widget")
        assert widgets is not None, "the stored CRD is served again"
        after = {(s.namespace, s.name): (s.rv, s.raw) for rt in (widgets, configmaps) for s in registry.store.iterate(rt.group_resource)}
        assert after == before
        assert registry.store.resource_version == last  # nothing re-seeded: the seed was stored
        assert registry.create(configmaps, "default", configmap("d"), WriteOptions()).raw.count(f'"resourceVersion":"{last + 1}"'.encode()) == 1
        with pytest.raises(errors.StatusError) as expired:
            registry.store.watch(widgets.group_resource, since=last - 1)
        assert expired.value.code == 410
        registry.store.watch(widgets.group_resource, since=last)  # from the version a list returned: nothing missed
    finally:
        again.journal.close()


def test_load_on_a_restart_applies_on_top_creating_only_what_is_missing(tmp_path):
    manifests = ROOT / "testdata" / "00-namespaces.yaml"
    first = app_.build(Settings(data_dir=tmp_path, load=[manifests]))
    created = first.loaded.created
    namespaces = first.registry.types.by_kind("", "v1", "Namespace")
    first.registry.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mine"}}, WriteOptions())
    first.journal.close()
    again = app_.build(Settings(data_dir=tmp_path, load=[manifests]))
    try:
        assert created > 0 and again.loaded.created == 0 and again.loaded.total == created  # configured or unchanged, as a second --load in memory
        assert again.store.get(namespaces.group_resource, "", "mine") is not None  # what clients made stays
    finally:
        again.journal.close()


def pod(name: str, node: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}}  # fmt: skip


def selected(registry, rt, *, fields: str = "", labels: str = "") -> list[str]:
    opts = ListOptions.parse({"fieldSelector": fields, "labelSelector": labels})
    return [s.name for s in registry.list(rt, "default", opts).items]


@pytest.mark.parametrize("changed", [False, True], ids=["as recorded", "selectable fields changed"])
def test_restored_objects_answer_label_and_field_selectors(tmp_path, changed):
    server = app_.build(Settings(data_dir=tmp_path))
    pods = server.registry.types.by_kind("", "v1", "Pod")
    for name, node in (("a", "n1"), ("b", "n2")):
        server.registry.create(pods, "default", pod(name, node), WriteOptions())
    server.journal.close()
    if changed:  # as if another mockapi had written the values with other selectable fields
        db = sqlite3.connect(tmp_path / DATABASE)
        db.execute("UPDATE indexes SET paths = '[]' WHERE resource = 'pods'")
        for namespace, name, raw, labels in db.execute("SELECT namespace, name, raw, labels FROM objects WHERE resource = 'pods'").fetchall():
            db.execute("UPDATE objects SET fields = ?, crc = ? WHERE resource = 'pods' AND namespace = ? AND name = ?",
                       (b'["x"]', journal_._crc(raw, labels, b'["x"]'), namespace, name))  # fmt: skip
        db.commit()
        db.close()
    for _ in range(2):  # the second start reads what the first recorded
        again = app_.build(Settings(data_dir=tmp_path))
        try:
            assert selected(again.registry, pods, fields="spec.nodeName=n2") == ["b"]
            assert selected(again.registry, pods, labels="app=a") == ["a"]
        finally:
            again.journal.close()


def test_an_in_memory_server_builds_nothing_of_the_persistence():
    server = app_.build(Settings())
    assert server.journal is None and type(server.store) is Store


def test_mockapi_server_with_a_data_dir_acknowledges_writes_once_durable_and_restarts_with_them(tmp_path):
    import httpx

    from mockapi.testing import MockAPIServer

    with MockAPIServer(data_dir=tmp_path) as mockapi:
        created = httpx.post(f"{mockapi.url}/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}, "data": {"a": "b"}})
        rv = int(created.json()["metadata"]["resourceVersion"])
        assert created.status_code == 201 and mockapi.server.journal.durable_rv >= rv  # on disk before the response
    with MockAPIServer(data_dir=tmp_path) as mockapi:  # the first one's shutdown released the directory
        again = httpx.get(f"{mockapi.url}/api/v1/namespaces/default/configmaps/c").json()
        assert again["data"] == {"a": "b"} and int(again["metadata"]["resourceVersion"]) == rv


def test_a_stored_object_whose_bytes_changed_on_disk_is_refused_at_start(tmp_path, journaled):
    journal, store = journaled
    store.create(CONFIGMAPS, configmap("a", x="1"))
    journal.close()
    db = sqlite3.connect(tmp_path / DATABASE)
    db.execute("UPDATE objects SET raw = CAST(replace(CAST(raw AS TEXT), '\"1\"', '\"2\"') AS BLOB)")  # as a flipped bit would
    db.commit()
    db.close()
    reopened = Journal(tmp_path)
    try:
        with pytest.raises(JournalError, match=r"damaged: the stored configmaps/default/a does not match its checksum"):
            list(reopened.rows())
    finally:
        reopened.close()
