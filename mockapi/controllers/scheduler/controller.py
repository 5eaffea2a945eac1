"""The scheduler controller: informers → a snapshot and the scheduling queue → one scheduling loop,
binding cycles as tasks (kube-scheduler's ``scheduleOne`` with its goroutine per binding).

Informers (``client.watch``) keep the :class:`~.nodeinfo.Snapshot` — every Node, every pod assigned
to a node and not finished — and feed the queue: a pod to schedule has no ``spec.nodeName``, no
``deletionTimestamp`` and a ``spec.schedulerName`` one of the profiles names. Node events, assigned
pods leaving and new pods are :class:`~.events.ClusterEvent` s that move parked pods back (others,
such as device events, come in through :meth:`Scheduler.on_event`).

The loop pops a pod, runs the scheduling cycle of its profile's
:class:`~.framework.Framework` (the pod is assumed on its node in the snapshot at once) and starts
its binding cycle as a task, so the next pod is scheduled while this one waits on Permit, PreBind
and Bind. The default binder POSTs ``pods/{name}/binding`` through ``client.bind``. Outcomes are
written as kube-scheduler writes them (:mod:`.outcome`): on failure ``PodScheduled=False`` with
reason ``Unschedulable`` and kube's message, and a Warning Event ``FailedScheduling``; preemption's
victims are deleted and the pod's ``status.nominatedNodeName`` set; on success an Event
``Scheduled``. A failed pod goes back to the queue, unschedulable (with the plugins that rejected it)
or, after an error, to backoff.

A profile's HTTP extenders (:mod:`.extenders`) are awaited inside the scheduling cycle, as kube
calls them inside ``scheduleOne``; an extender's error is the pod's ``SchedulerError`` with the
extender's URL in the message. Each cycle's record (:mod:`.attempts`) is kept per pod and read with
:meth:`Scheduler.last_attempt`; ``on_extender_call`` hears of every extender call (metrics).
"""

from __future__ import annotations

import asyncio
import logging
import time

from mockapi import clock as clocks, errors
from mockapi.client import ADDED, DELETED, Client, Kind, patch_unanswered
from mockapi.controllers import informer
from mockapi.controllers.scheduler import attempts as attempts_, config as config_, events, extenders as extenders_, outcome, pods as pods_
from mockapi.controllers.scheduler.framework import CycleState, FitError, Framework
from mockapi.controllers.scheduler.nodeinfo import Snapshot, is_terminal
from mockapi.controllers.scheduler.plugins.coscheduling import GroupIndex
from mockapi.controllers.scheduler.queue import Closed, QueuedPod, SchedulingQueue
from mockapi.controllers.scheduler.status import Code, Status

log = logging.getLogger("mockapi.scheduler")


class Scheduler:
    """``on_extender_call(extender, verb, outcome, seconds)``, if given (or set later), hears of
    every extender call (for metrics); :meth:`last_attempt` tells what each pod's last scheduling
    cycle found (the last ``max_attempts`` pods are kept)."""

    def __init__(self, client: Client, *, config: config_.Configuration | None = None, clock: clocks.Clock | None = None, device_plugin=None, binder=None,
                 max_unschedulable: float = 60.0, on_extender_call: extenders_.Observer | None = None, max_attempts: int = attempts_.DEFAULT_MAX_PODS) -> None:  # fmt: skip
        self.client = client
        self.config = config or config_.default()
        self.clock = clock or clocks.SystemClock()
        self.binder = binder or self._bind
        self.on_extender_call = on_extender_call
        self.attempts = attempts_.AttemptLog(max_attempts)
        self.frameworks = {
            profile.scheduler_name: Framework(profile, binder=self.binder, device_plugin=device_plugin, monotonic=self.clock.monotonic, on_extender_call=self._extender_call)
            for profile in self.config.profiles
        }  # fmt: skip
        hints: dict[str, tuple] = {}
        for fwk in self.frameworks.values():
            hints.update(fwk.hints())
        self.snapshot = Snapshot()
        self.queue = SchedulingQueue(
            monotonic=self.clock.monotonic, hints=hints, pre_enqueue=self._pre_enqueue, max_unschedulable=max_unschedulable,
            initial_backoff=self.config.pod_initial_backoff, max_backoff=self.config.pod_max_backoff,
        )  # fmt: skip
        self.groups = GroupIndex()  # the gangs' pods as the pod informer sees them (Coscheduling's pod lister)
        for fwk in self.frameworks.values():  # the plugins' handle on the queue (kube's Handle.Activate) and the pods
            fwk.activate, fwk.parked, fwk.group_size = self.queue.activate, self.queue.parked, self.groups.size
        self.synced = asyncio.Event()
        self._pending_sync = {outcome.PODS, outcome.NODES}
        self._tasks: list[asyncio.Task] = []
        self._binding: dict[str, asyncio.Task] = {}

    # ------------------------------------------------------------------ running
    async def start(self) -> None:
        """Start the informers, wait for their initial lists, then start scheduling."""
        self._tasks = [asyncio.create_task(self._inform(outcome.NODES, self._on_node)), asyncio.create_task(self._inform(outcome.PODS, self._on_pod))]
        for kind, handle in self._plugin_informers():  # a plugin's own kinds (DefaultPreemption's PDBs): not waited for
            self._tasks.append(asyncio.create_task(informer.inform(self.client, kind, handle, lambda _kind: None, log)))
        await self.synced.wait()
        log.info("scheduler synced: %d nodes, %d pods to schedule", len(self.snapshot), len(self.queue))
        self._tasks.append(asyncio.create_task(self._loop()))

    def _plugin_informers(self) -> list:
        """(kind, handler) for each kind a plugin watches (its ``informers()``)."""
        found = []
        for fwk in self.frameworks.values():
            for plugin in fwk.plugins.values():
                found += getattr(plugin, "informers", lambda: ())()
        return found

    async def stop(self) -> None:
        self.queue.close()
        tasks = self._tasks + list(self._binding.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks, self._binding = [], {}
        for fwk in self.frameworks.values():
            await fwk.aclose()

    # ------------------------------------------------------------------ seeing
    def last_attempt(self, namespace: str, name: str) -> dict | None:
        """The pod's last scheduling attempt as JSON-ready data (see :mod:`.attempts`), or None."""
        attempt = self.attempts.get(namespace, name)
        return attempt.as_dict() if attempt is not None else None

    def _extender_call(self, extender: str, verb: str, outcome: str, seconds: float) -> None:
        if self.on_extender_call is not None:
            self.on_extender_call(extender, verb, outcome, seconds)

    async def run(self) -> None:
        """:meth:`start`, then schedule until cancelled."""
        await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()

    async def _inform(self, kind: Kind, handle) -> None:
        await informer.inform(self.client, kind, handle, self._mark_synced, log)

    def _mark_synced(self, kind: Kind) -> None:
        self._pending_sync.discard(kind)
        if not self._pending_sync:
            self.synced.set()

    # ---------------------------------------------------------------- informers
    def _on_node(self, event_type: str, node: dict) -> None:
        if event_type == DELETED:
            self.snapshot.remove_node(node["metadata"]["name"])
            return
        before = self.snapshot.get(node["metadata"]["name"])
        seen = _schedulable_view(before.node) if before is not None else None  # read now: set_node changes the info
        self.snapshot.set_node(node)
        if event_type == ADDED or before is None:
            self.queue.on_event(events.NODE_ADD)
        elif seen != _schedulable_view(node):
            self.queue.on_event(events.NODE_UPDATE)

    def _on_pod(self, event_type: str, pod: dict) -> None:
        self.groups.observe(pod, gone=event_type == DELETED)  # first: the events below may requeue a sibling
        key = pods_.key(pod)
        assigned = (pod.get("spec") or {}).get("nodeName")
        if event_type == DELETED or (assigned and is_terminal(pod)):
            self._forget(key, pod)
        elif assigned:
            self.queue.delete(key)
            self.snapshot.add_pod(pod)
            if event_type == ADDED:
                self.queue.on_event(events.POD_ADD)
        elif pod["metadata"].get("deletionTimestamp") or not self.responsible_for(pod):
            self.queue.delete(key)
            self.snapshot.forget_nomination(key)
        elif key not in self.snapshot.pod_node:  # assumed (or bound, and this event is older): not again
            if event_type == ADDED:
                self.queue.on_event(events.ClusterEvent(events.POD, events.ADD, "UnscheduledPodAdd"))
            self.queue.add(pod)

    def _forget(self, key: str, pod: dict) -> None:
        self.queue.delete(key)
        self.snapshot.forget_nomination(key)
        for fwk in self.frameworks.values():
            fwk.reject_waiting_pod(key, "", "pod deleted")
        if self.snapshot.remove_pod(key):
            self.queue.on_event(events.POD_DELETE)

    def responsible_for(self, pod: dict) -> bool:
        return ((pod.get("spec") or {}).get("schedulerName") or config_.DEFAULT_SCHEDULER_NAME) in self.frameworks

    def on_event(self, event: events.ClusterEvent) -> int:
        """Another informer (devices, say) saw something that may help parked pods."""
        return self.queue.on_event(event)

    def _pre_enqueue(self, pod: dict) -> str | None:
        fwk = self._framework(pod)
        return fwk.pre_enqueue(pod) if fwk is not None else None

    def _framework(self, pod: dict) -> Framework | None:
        return self.frameworks.get((pod.get("spec") or {}).get("schedulerName") or config_.DEFAULT_SCHEDULER_NAME)

    # ------------------------------------------------------------ the loop
    async def _loop(self) -> None:
        while True:
            try:
                info = await self.queue.pop()
            except Closed:
                return
            try:
                await self.schedule_one(info)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one pod's trouble never stops the scheduler
                log.exception("scheduling %s failed; backing off", info.key)
                self.queue.add_backoff(info)
            await asyncio.sleep(0)  # let the informers and the binding cycles run

    async def schedule_one(self, info: QueuedPod) -> None:
        """One scheduling cycle; on success the binding cycle starts as a task."""
        pod, fwk = info.pod, self._framework(info.pod)
        if fwk is None or (pod.get("spec") or {}).get("nodeName") or pod["metadata"].get("deletionTimestamp") or info.key in self.snapshot.pod_node:
            self.queue.done(info.key)
            return
        state = CycleState()
        time_ = self._now()
        result, status = await fwk.run_scheduling_cycle(state, pod, self.snapshot)
        attempt = state.attempt
        if attempt is not None:
            attempt.time = time_
            self.attempts.put(attempt)
        if isinstance(result, FitError):
            await self._fit_error(info, fwk, result, attempt)
        elif status.success or status.code is Code.WAIT:
            _conclude(attempt, attempts_.BINDING if status.success else attempts_.WAITING, node=result.node)
            self._binding[info.key] = asyncio.create_task(self._binding_cycle(info, fwk, state, result.node))
        else:
            _conclude(attempt, "", node=result.node)
            await self._failed(info, fwk, status, attempt)

    async def _binding_cycle(self, info: QueuedPod, fwk: Framework, state: CycleState, node_name: str) -> None:
        try:
            status = await fwk.bind(state, info.pod, node_name, self.snapshot)
            if status.success:
                self.queue.done(info.key)
                message = outcome.scheduled_message(info.pod, node_name)
                _conclude(state.attempt, attempts_.SCHEDULED, node=node_name, message=message)
                await self._record(info.pod, fwk, "Scheduled", message, warning=False)
            else:
                # The pod's room is free again: what waits for a pod to leave may fit now (kube moves
                # the unschedulable pods as on AssignedPodDelete when it forgets an assumed pod).
                self.queue.on_event(events.POD_DELETE)
                await self._failed(info, fwk, status, state.attempt)
        finally:
            self._binding.pop(info.key, None)

    async def _bind(self, pod: dict, node_name: str) -> None:
        meta = pod["metadata"]
        await self.client.bind(meta.get("namespace", ""), meta["name"], meta.get("uid", ""), node_name)

    # ------------------------------------------------------------ failures
    async def _fit_error(self, info: QueuedPod, fwk: Framework, error: FitError, attempt=None) -> None:
        if error.status is not None:  # a plugin's (or an extender's) Error: retried after the backoff
            await self._failed(info, fwk, error.status, attempt)
            return
        nominated = error.nominated_node
        _conclude(attempt, attempts_.UNSCHEDULABLE, message=error.message(), nominated_node=nominated)
        if nominated:
            self.snapshot.nominate(info.pod, nominated)
            await self._evict(error.victims, info.pod, nominated)
        if not self.queue.add_unschedulable(info, error.diagnosis.unschedulable_plugins):
            return  # deleted meanwhile: nothing to report
        await self._report(info.pod, fwk, outcome.UNSCHEDULABLE, error.message(), nominated_node=nominated)

    async def _failed(self, info: QueuedPod, fwk: Framework, status: Status, attempt=None) -> None:
        """A rejection (Reserve, Permit, a gang's timeout) parks the pod; an error backs off."""
        _conclude(attempt, attempts_.UNSCHEDULABLE if status.rejected else attempts_.SCHEDULER_ERROR, message=status.message())
        if status.rejected:
            tier = self.queue.add_unschedulable(info, {status.plugin} if status.plugin else set())
            reason = outcome.UNSCHEDULABLE
        else:
            tier = self.queue.add_backoff(info)
            reason = outcome.SCHEDULER_ERROR
        if not tier:
            return  # deleted meanwhile: nothing to report
        await self._report(info.pod, fwk, reason, status.message())

    async def _evict(self, victims: list[dict], preemptor: dict, node_name: str) -> None:
        for victim in victims:
            meta = victim["metadata"]
            message = f"Preempted by pod {preemptor['metadata'].get('uid', '')} on node {node_name}"
            await self._record(victim, None, "Preempted", message, warning=False)
            try:
                await self.client.delete(outcome.PODS, meta.get("namespace", ""), meta["name"])
            except errors.StatusError as exc:
                if exc.code != 404:
                    log.warning("could not delete victim %s: %s", pods_.key(victim), exc)

    async def _report(self, pod: dict, fwk: Framework, reason: str, message: str, *, nominated_node: str = "") -> None:
        """``PodScheduled=False`` on the pod (unless it says so already) and a FailedScheduling Event."""
        meta = pod["metadata"]
        patch = outcome.unschedulable_patch(pod, reason=reason, message=message, now=self._now(), nominated_node=nominated_node)
        if patch is not None:
            try:
                await patch_unanswered(self.client, outcome.PODS, meta.get("namespace", ""), meta["name"], patch, subresource="status")
            except errors.StatusError as exc:
                if exc.code != 404:
                    log.warning("could not update the status of %s: %s", pods_.key(pod), exc)
        await self._record(pod, fwk, "FailedScheduling", message, warning=True)

    async def _record(self, pod: dict, fwk: Framework | None, reason: str, message: str, *, warning: bool) -> None:
        name = f"{pod['metadata']['name']}.{time.time_ns():x}"  # a unique name, not a timestamp
        component = fwk.scheduler_name if fwk is not None else config_.DEFAULT_SCHEDULER_NAME
        event = outcome.event(pod, reason=reason, message=message, warning=warning, now=self._now(), name=name, component=component)
        try:
            await self.client.create_event(event)
        except errors.StatusError as exc:  # Events are best effort, as in client-go's recorder
            log.debug("could not record event %s: %s", name, exc)

    def _now(self) -> str:
        return clocks.rfc3339(self.clock.now())


def _conclude(attempt, outcome_: str, *, node: str | None = None, message: str | None = None, nominated_node: str = "") -> None:
    """What became of the attempt (the record is the one in the log: updated in place)."""
    if attempt is None:
        return
    if outcome_:
        attempt.outcome = outcome_
    if node is not None:
        attempt.node = node
    if message is not None:
        attempt.message = message
    if nominated_node:
        attempt.nominated_node = nominated_node


def _schedulable_view(node: dict | None) -> tuple:
    """What of a Node can change a pod's fit: a kubelet's heartbeat (condition times) changes
    nothing here and moves no parked pod (kube-scheduler's nodeSchedulingPropertiesChange)."""
    if node is None:
        return ()
    spec, status, meta = node.get("spec") or {}, node.get("status") or {}, node["metadata"]
    conditions = tuple(sorted((c.get("type", ""), c.get("status", "")) for c in status.get("conditions") or ()))
    return (
        meta.get("labels"), meta.get("annotations"), spec.get("unschedulable"), spec.get("taints"),
        status.get("allocatable"), conditions,
    )
