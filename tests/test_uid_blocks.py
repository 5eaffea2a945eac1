"""Random UIDs made in blocks (mockapi/clock.py): canonical version 4 UUIDs, each handed out once,
across threads and across a fork."""

from __future__ import annotations

import collections
import os
import re
import threading
import uuid
import warnings

import pytest

from mockapi import clock

CANONICAL_V4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def test_a_block_is_canonical_version_4_uuids_that_uuid_reads_back():
    block = clock.uid_block(500)
    assert len(block) == 500 == len(set(block))
    for text in block:
        assert CANONICAL_V4.fullmatch(text)
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text


def test_every_random_digit_takes_every_value_and_the_variant_all_four():
    """122 bits drawn: each of the 30 free hex digits spans 0-f, the variant digit 8, 9, a and b
    evenly (its two low bits are random), the version digit is always 4."""
    block = clock.uid_block(4000)
    digits = [text.replace("-", "") for text in block]
    for place in range(32):
        seen = collections.Counter(d[place] for d in digits)
        if place == 12:
            assert set(seen) == {"4"}
        elif place == 16:
            assert set(seen) == set("89ab") and min(seen.values()) > 800  # 1000 expected each
        else:
            assert set(seen) == set("0123456789abcdef"), place


def test_random_uid_hands_out_every_uuid_once_across_blocks():
    uids = [clock.random_uid() for _ in range(3 * clock.UIDS_PER_BLOCK + 7)]
    assert len(set(uids)) == len(uids)
    assert all(CANONICAL_V4.fullmatch(u) for u in uids)


def test_threads_refilling_at_once_never_share_a_uuid(monkeypatch):
    monkeypatch.setattr(clock, "UIDS_PER_BLOCK", 3)  # refills all the time, from every thread
    clock._uids.clear()
    found: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def take(out: list[str]) -> None:
        start.wait()
        for _ in range(3000):
            out.append(clock.random_uid())

    threads = [threading.Thread(target=take, args=(out,)) for out in found]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [u for out in found for u in out]
    assert len(every) == 8 * 3000 == len(set(every))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_hand_out_its_parents_uuids():
    clock.random_uid()  # the parent holds the rest of a block
    pending = list(clock._uids)
    assert pending
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running (3.12+)
        pid = os.fork()
    if pid == 0:  # the child: its first UUIDs, to the parent
        try:
            os.write(write, " ".join(clock.random_uid() for _ in range(5)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode().split()
    os.waitpid(pid, 0)
    assert len(child) == 5 and all(CANONICAL_V4.fullmatch(u) for u in child)
    assert not set(child) & set(pending)
    assert clock._uids == pending  # the parent's block is still its own
    assert clock.random_uid() == pending[-1]
