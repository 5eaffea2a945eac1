"""The injected clock's renderings and UIDs."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone

from mockapi import clock


def test_rfc3339_is_right_across_seconds_whatever_came_before():
    start = datetime(2024, 2, 29, 23, 59, 58, 900_000, tzinfo=timezone.utc)
    seen = [clock.rfc3339(start + timedelta(seconds=0.05 * i)) for i in range(40)]
    expected = [(start + timedelta(seconds=0.05 * i)).strftime("%Y-%m-%dT%H:%M:%SZ") for i in range(40)]
    assert seen == expected and "2024-03-01T00:00:00Z" in seen
    assert clock.rfc3339(datetime(2024, 1, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=1)))) == "2024-01-01T00:00:00Z"
    assert clock.rfc3339(start) == "2024-02-29T23:59:58Z"  # going back in time is fine too


def test_random_uids_are_canonical_version_4_uuids():
    uids = {clock.random_uid() for _ in range(2000)}
    assert len(uids) == 2000
    for text in list(uids)[:200]:
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", text)
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text
