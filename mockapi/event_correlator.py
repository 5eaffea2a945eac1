"""client-go's EventCorrelator (``tools/record/events_cache.go``): what a recorder does with an
Event before it writes it, so that a condition that repeats is one Event whose ``count`` grows —
``kubectl describe`` shows ``2m (x5 over 10m)`` — not a new object each time.

Three steps per Event, in client-go's order and with its constants:

1. **Aggregate** (EventAggregator): Events *similar* to each other — the same source, involved
   object, type, reason and reporting controller/instance, any message — are tracked per
   10-minute window (``DEFAULT_AGGREGATE_INTERVAL``, reset when a similar Event has not come for
   longer); from the 10th distinct message (``DEFAULT_AGGREGATE_MAX_EVENTS``) on, the Event
   written is one new Event ``(combined from similar events): <its message>`` counted under the
   similarity key, so that a condition whose message keeps changing cannot flood the store.
2. **Count** (eventLogger): an Event *identical* to one seen before (getEventKey: source,
   involved object with its fieldPath, type, reason, message) is written as a strategic merge
   patch of that Event — ``count`` + 1, ``lastTimestamp``, ``message`` — instead of a new object.
   If the patch finds no Event (deleted: a reset, a TTL), the writer creates it again under its
   old name, with the count so far (client-go's ``recordEvent``).
3. **Spam filter** (EventSourceObjectSpamFilter): a token bucket per source and object (and
   type: getSpamKey), 25 Events at once, then one more every 5 minutes; an Event past it is not
   written at all (its count is kept, so the next one written carries it).

Each cache is an LRU of ``MAX_LRU_CACHE_ENTRIES`` (4096) keys, as client-go's: the state is
bounded whatever the controllers record. One correlator per client, as one per recorder
(EventBroadcaster) in kube: the keys carry the source component, so controllers sharing one
would still not mix.

Time is the Event's own ``lastTimestamp``: the recording controller took it from its injected
clock (client-go's recorder stamps the Event and its correlator reads the time, both on the real
clock by default: here they are one reading), so a test on a fake clock sees windows and refills
move with that clock. The keys are tuples of client-go's fields (the same fields; client-go joins
them without a separator, which can make two keys one).

Departures, none visible to a client: the correlator does not read back what the server
answered (``UpdateState``: only the resourceVersion would differ, and the patch does not send
it), and a combined Event is named as the Event that triggered it (``<object>.<hex>``, unique
already) rather than from the clock's nanoseconds, which the second-precision timestamps here
cannot give. When the combining set is full, the oldest message leaves it (client-go pops an
arbitrary one).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from datetime import datetime

MAX_LRU_CACHE_ENTRIES = 4096
DEFAULT_AGGREGATE_MAX_EVENTS = 10
DEFAULT_AGGREGATE_INTERVAL = 600  # seconds
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0
COMBINED_PREFIX = "(combined from similar events): "  # EventAggregatorByReasonMessageFunc


class _LRU(OrderedDict):
    """k8s.io/utils/lru in small: :meth:`find` makes a key the newest; :meth:`add` a new key, and
    forgets the oldest past ``size``. Values are mutable records, changed in place."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def find(self, key):
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def add(self, key, value) -> None:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)


class Correlated:
    """What to write: ``event`` (complete, to create), and ``patch`` when the Event exists already
    (write the patch to ``event``'s name; create ``event`` if that finds nothing)."""

    __slots__ = ("event", "patch")

    def __init__(self, event: dict, patch: dict | None) -> None:
        self.event, self.patch = event, patch


class EventCorrelator:
    """client-go's ``NewEventCorrelator`` (its defaults); ``spam_filter=False`` leaves step 3 out."""

    def __init__(self, *, cache_size: int = MAX_LRU_CACHE_ENTRIES, max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
                 interval: float = DEFAULT_AGGREGATE_INTERVAL, burst: int = DEFAULT_SPAM_BURST, qps: float = DEFAULT_SPAM_QPS,
                 spam_filter: bool = True) -> None:  # fmt: skip
        self.max_events, self.interval, self.burst, self.qps = max_events, interval, burst, qps
        self.spam_filter = spam_filter
        self._aggregates = _LRU(cache_size)  # aggregate key → [messages seen (an ordered set), last time]
        self._observed = _LRU(cache_size)  # event key (or aggregate key) → [count, firstTimestamp, name]
        self._buckets = _LRU(cache_size)  # spam key → [tokens, time they were counted]
        self._last_stamp = ("", 0.0)  # the last timestamp parsed, and its seconds

    def correlate(self, event: dict) -> Correlated | None:
        """What to write for ``event`` (left unchanged), or None when the spam filter drops it
        (client-go's ``EventCorrelate``: aggregate, observe, filter). The three keys share their
        parts, joined once: a unique Event costs three LRU lookups and no copy."""
        now = self._seconds(event)
        source, involved = event.get("source") or {}, event.get("involvedObject") or {}
        type_, reason, message = event.get("type", ""), event.get("reason", ""), event.get("message", "")
        spam_key = (source.get("component", ""), source.get("host", ""), involved.get("kind", ""), involved.get("namespace", ""),
                    involved.get("name", ""), involved.get("uid", ""), involved.get("apiVersion", ""), type_)  # getSpamKey
        aggregate_key = (spam_key, reason, event.get("reportingComponent", ""), event.get("reportingInstance", ""))  # EventAggregatorByReasonFunc
        if self._similar(aggregate_key, message, now):
            event, key = self._combined(event, source, involved, message), aggregate_key
        else:
            key = (spam_key, involved.get("fieldPath", ""), reason, message)  # getEventKey
        correlated = self._observe(event, key)
        if self.spam_filter and not self._accept(spam_key, now):
            return None
        return correlated

    # ------------------------------------------------------------ the steps
    def _similar(self, aggregate_key: tuple, message: str, now: float) -> bool:
        """EventAggregator.EventAggregate's count: whether this message is the ``max_events``-th
        distinct one among similar Events in the window (then the Event is combined)."""
        record = self._aggregates.find(aggregate_key)
        if record is None:
            self._aggregates.add(aggregate_key, record := [{}, now])
        elif now - record[1] > self.interval:  # too old: a fresh window
            record[0] = {}
        messages = record[0]
        messages[message] = None
        record[1] = now
        if len(messages) < self.max_events:
            return False
        del messages[next(iter(messages))]  # do not grow the set past the maximum
        return True

    @staticmethod
    def _combined(event: dict, source: dict, involved: dict, message: str) -> dict:
        """The Event written in place of one too many similar ones (EventAggregate's eventCopy)."""
        meta, now = event["metadata"], event.get("lastTimestamp")
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "")},
            "involvedObject": involved, "reason": event.get("reason", ""), "message": COMBINED_PREFIX + message,
            "source": source, "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": event.get("type", ""),
        }  # fmt: skip

    def _observe(self, event: dict, key: tuple) -> Correlated:
        """eventLogger.eventObserve: a new Event is created as it is; a known one becomes a patch
        of the first one's object (its name, its firstTimestamp, the count so far + 1)."""
        last = self._observed.find(key)
        if last is None or last[0] <= 0:  # (an Event recorded without a count is never counted on, as in client-go)
            name = event["metadata"].get("name", "")  # (none: generateName; nothing to patch later, so not counted on either)
            observation = [event.get("count") or 0 if name else 0, event.get("firstTimestamp"), name]
            if last is None:
                self._observed.add(key, observation)
            else:
                last[:] = observation
            return Correlated(event, None)
        last[0] = count = last[0] + 1
        meta = {k: v for k, v in event["metadata"].items() if k != "resourceVersion"}
        meta["name"] = last[2]
        event = {**event, "metadata": meta, "firstTimestamp": last[1], "count": count}
        # CreateTwoWayMergePatch against the same Event with no count, message nor lastTimestamp
        patch = {"count": count, "lastTimestamp": event.get("lastTimestamp")}
        if event.get("message"):
            patch["message"] = event["message"]
        return Correlated(event, patch)

    def _accept(self, spam_key: tuple, now: float) -> bool:
        """EventSourceObjectSpamFilter.Filter, inverted: whether the object's bucket (x/time/rate's
        token bucket, full at first) has a token for this Event."""
        bucket = self._buckets.find(spam_key)
        if bucket is None:
            self._buckets.add(spam_key, [self.burst - 1.0, now])
            return True
        tokens = min(bucket[0] + max(now - bucket[1], 0.0) * self.qps, float(self.burst))
        if tokens < 1.0:  # a refusal leaves the bucket as it was (rate.Limiter's reserveN)
            return False
        bucket[0], bucket[1] = tokens - 1.0, now
        return True

    # ------------------------------------------------------------ time
    def _seconds(self, event: dict) -> float:
        """The Event's ``lastTimestamp`` (else ``firstTimestamp``, else ``eventTime``) in seconds;
        the last text parsed is remembered (a controller stamps many Events in one second)."""
        stamp = event.get("lastTimestamp") or event.get("firstTimestamp") or event.get("eventTime") or ""
        last = self._last_stamp
        if stamp == last[0]:
            return last[1]
        try:
            seconds = datetime.fromisoformat(stamp).timestamp()
        except (TypeError, ValueError):
            return time.time()  # no usable time: the wall clock's, as client-go's default clock
        self._last_stamp = (stamp, seconds)
        return seconds

