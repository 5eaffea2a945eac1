"""JSON kept beyond a request is kept at its own size (wire.exact): orjson's result holds its whole
output buffer, so a memo of a few thousand short keys held 4 KB per key."""

import tracemalloc

import orjson

from mockapi.fieldmanager import typed
from mockapi.schema import meta
from mockapi.wire import exact


def _held_per_call(call, count: int = 1000) -> float:
    """Bytes still allocated after ``call(i)`` for i in range(count), per call."""
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(count):
            call(i)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    return sum(stat.size_diff for stat in after.compare_to(before, "filename")) / count


def test_exact_gives_equal_bytes_of_their_own_size():
    raw = orjson.dumps({"a": 0})
    assert exact(raw) == raw and type(exact(raw)) is bytes
    kept: list = []
    assert _held_per_call(lambda i: kept.append(exact(orjson.dumps({"a": i})))) < 200
    # what exact() is for (should orjson ever return right-sized bytes, this says the copy is moot)
    assert _held_per_call(lambda i: kept.append(orjson.dumps({"a": i}))) > 2000


def test_the_metadata_value_memo_keeps_exact_keys():
    labels = dict(meta._VALUE_CHECKS)["labels"]
    errs: list = []
    held = _held_per_call(lambda i: labels({"app": f"a{i}"}, "metadata.labels", errs))
    assert errs == []
    assert held < 400, held  # a set slot and a ~50-byte key, not 4 KB


def test_the_added_metadata_memo_keeps_exact_keys():
    typed._ADDED_META.clear()
    held = _held_per_call(lambda i: typed._added_metadata({"name": f"p{i}", "labels": {"app": "x"}}), count=500)
    assert len(typed._ADDED_META) == 500
    assert held < 2500, held  # the memo's key and the field set it maps to; with orjson's buffer, 4 KB more
