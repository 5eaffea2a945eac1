"""The pods' claims controller: kube's resourceclaim controller, for DeviceClaims.

For each pod entry of ``spec.deviceClaims`` with an embedded ``claim`` or a ``claimTemplateName``,
it makes one DeviceClaim (SCHEDULER.md "Objects"):

- ``generateName: <pod>-<entry>-`` in the pod's namespace, the template's labels and annotations,
  the annotation ``devmgmtproto.k8s.io/pod-claim-name: <entry>``, and a controller ownerReference
  to the pod (``blockOwnerDeletion``), so the garbage collector deletes it with the pod;
- then records it in the pod's ``status.deviceClaimStatuses`` (``{name, deviceClaimName}``).

It is idempotent across restarts and retries: before creating, it looks for a claim the pod
already owns for that entry (by owner uid and annotation), so a crash between the create and the
status write never makes two. A missing template leaves the pod Pending: a Warning Event
``FailedDeviceClaimCreation`` names it, and the pod is retried when the template appears.

It also keeps ``status.podNames`` of claims exact where kube's controller keeps ``reservedFor``:
a pod that is deleted or has finished (Succeeded, Failed) is removed from the claims it used, so
their devices can be freed or given to the next pod.
"""

from __future__ import annotations

import asyncio
import logging
import time

from mockapi import clock as clocks, errors
from mockapi.client import ADDED, DELETED, Client, Kind
from mockapi.controllers import informer

log = logging.getLogger("mockapi.podclaims")

API_VERSION = "devmgmtproto.k8s.io/v1alpha1"
PODS = Kind("v1", "Pod")
CLAIMS = Kind(API_VERSION, "DeviceClaim")
TEMPLATES = Kind(API_VERSION, "DeviceClaimTemplate")
POD_CLAIM_NAME = "devmgmtproto.k8s.io/pod-claim-name"
ALLOCATION_FINALIZER = "devmgmtproto.k8s.io/allocation"  # the allocator's (kinds.FINALIZER)
COMPONENT = "mockapi-podclaims"
FAILED = "FailedDeviceClaimCreation"
FINISHED = ("Succeeded", "Failed")


CLAIM_SOURCES = ("claim", "claimName", "claimTemplateName")  # one per spec.deviceClaims entry (the server checks)


def claim_sources(pod: dict) -> list[tuple[str, str, object]]:
    """(entry name, source, value) of each of a pod's device claims, in spec order."""
    found = []
    for entry in (pod.get("spec") or {}).get("deviceClaims") or []:
        for key in CLAIM_SOURCES:
            if entry.get(key) is not None:
                found.append((entry["name"], key, entry[key]))
                break
    return found


def owner_reference(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def controller_pod_uid(claim: dict) -> str:
    """The uid of the pod that owns ``claim`` as its controller, or ""."""
    for ref in claim["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1":
            return ref.get("uid", "")
    return ""


def claim_names(pod: dict) -> dict[str, str]:
    """entry → the DeviceClaim the pod uses for it, as far as known (``claimName`` entries directly,
    the others from ``status.deviceClaimStatuses``)."""
    made = {s.get("name"): s.get("deviceClaimName") for s in (pod.get("status") or {}).get("deviceClaimStatuses") or []}
    found = {}
    for entry, source, value in claim_sources(pod):
        name = value if source == "claimName" else made.get(entry)
        if name:
            found[entry] = name
    return found


def _recorded(pod: dict) -> bool:
    """Whether every entry :meth:`PodClaims.sync` would make a claim for is in the pod's
    ``status.deviceClaimStatuses`` already (then a sync writes nothing: the pod's later events —
    bound, running — need no look)."""
    made = {s.get("name") for s in (pod.get("status") or {}).get("deviceClaimStatuses") or ()}
    return all(source == "claimName" or entry in made for entry, source, _ in claim_sources(pod))


def is_finished(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in FINISHED


class PodClaims:
    def __init__(self, client: Client, *, clock: clocks.Clock | None = None) -> None:
        self.client = client
        self.clock = clock or clocks.SystemClock()
        self.pods: dict[tuple[str, str], dict] = {}
        self.templates: dict[tuple[str, str], dict] = {}
        self.claims: dict[tuple[str, str], dict] = {}
        self.owned: dict[str, dict[str, str]] = {}  # pod uid → entry → claim name (from the claims' annotations)
        self.synced = asyncio.Event()
        self._pending_sync = {PODS, TEMPLATES, CLAIMS}
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._queued: set[tuple[str, str]] = set()
        self._released: dict[tuple[str, str], set[str]] = {}  # claim → pods to remove from podNames
        self._reported: set[tuple[str, str, str]] = set()  # (pod uid, entry, message) already told
        self._tasks: list[asyncio.Task] = []

    # ------------------------------------------------------------------ running
    async def run(self) -> None:
        handlers = {PODS: self._on_pod, TEMPLATES: self._on_template, CLAIMS: self._on_claim}
        self._tasks = [asyncio.create_task(self._inform(kind, handle)) for kind, handle in handlers.items()]
        try:
            await self.synced.wait()
            await self._work()
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _inform(self, kind: Kind, handle) -> None:
        await informer.inform(self.client, kind, handle, self._mark_synced, log)

    def _mark_synced(self, kind: Kind) -> None:
        self._pending_sync.discard(kind)
        if not self._pending_sync:
            self.synced.set()

    def _enqueue(self, key: tuple[str, str]) -> None:
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            self._queued.discard(key)
            try:
                if key[0] == "\0claim":
                    await self._release(key[1])
                else:
                    await self.sync(key)
            except asyncio.CancelledError:
                raise
            except errors.StatusError as exc:
                if exc.code == 409:
                    await self._refresh(key)  # someone wrote in between: read it again, then retry
                    self._enqueue(key)
                else:
                    log.warning("syncing %s failed: %s", key, exc)
            except Exception:  # noqa: BLE001 - one pod's trouble never stops the worker
                log.exception("syncing %s failed", key)
            await asyncio.sleep(0)  # the informers (and the server) run between pods

    async def _refresh(self, key: tuple[str, str]) -> None:
        if key[0] == "\0claim":
            return
        try:
            pod = await self.client.get(PODS, key[0], key[1])
        except errors.StatusError as exc:
            if exc.code == 404:
                self.pods.pop(key, None)
                return
            raise
        current = self.pods.get(key)
        if current is None or int(pod["metadata"]["resourceVersion"]) >= int(current["metadata"]["resourceVersion"]):
            self.pods[key] = pod

    # ---------------------------------------------------------------- handlers
    def _on_pod(self, event_type: str, pod: dict) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if event_type == DELETED:
            self.pods.pop(key, None)
            self.owned.pop(meta.get("uid", ""), None)
            self._let_go(pod)
            return
        self.pods[key] = pod
        if is_finished(pod):  # a pod still terminating still uses its devices: only done pods let go
            self._let_go(pod)
        elif (pod.get("spec") or {}).get("deviceClaims") and not meta.get("deletionTimestamp") and not _recorded(pod):
            self._enqueue(key)

    def _on_template(self, event_type: str, template: dict) -> None:
        meta = template["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if event_type == DELETED:
            self.templates.pop(key, None)
            return
        self.templates[key] = template
        if event_type == ADDED:  # pods waiting for it go again
            for pod_key, pod in self.pods.items():
                if pod_key[0] == key[0] and any(s == "claimTemplateName" and v == key[1] for _, s, v in claim_sources(pod)):
                    self._enqueue(pod_key)

    def _on_claim(self, event_type: str, claim: dict) -> None:
        meta = claim["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        uid, entry = controller_pod_uid(claim), (meta.get("annotations") or {}).get(POD_CLAIM_NAME)
        if event_type == DELETED:
            self.claims.pop(key, None)
            if uid and entry and self.owned.get(uid, {}).get(entry) == key[1]:
                del self.owned[uid][entry]
            return
        self.claims[key] = claim
        if uid and entry:
            self.owned.setdefault(uid, {})[entry] = key[1]
        # podNames naming a pod this controller does not know (any more): the scheduler's write may
        # have landed after the pod was deleted — check, and take it back if so
        unknown = {
            name for name in (claim.get("status") or {}).get("podNames") or ()
            if (key[0], name) not in self.pods or not self._uses(self.pods[(key[0], name)], key[1], uid)
        }  # fmt: skip
        if unknown and self.synced.is_set():
            self._released.setdefault(key, set()).update(unknown)
            self._enqueue(("\0claim", f"{key[0]}/{key[1]}"))

    def _let_go(self, pod: dict) -> None:
        """A pod deleted or finished: the claims it used no longer list it in ``podNames``."""
        namespace, name = pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
        for claim_name in set(claim_names(pod).values()):
            claim = self.claims.get((namespace, claim_name))
            if claim is not None and name in ((claim.get("status") or {}).get("podNames") or []):
                self._released.setdefault((namespace, claim_name), set()).add(name)
                self._enqueue(("\0claim", f"{namespace}/{claim_name}"))

    # -------------------------------------------------------------------- work
    async def sync(self, key: tuple[str, str]) -> None:
        pod = self.pods.get(key)
        if pod is None or pod["metadata"].get("deletionTimestamp") or is_finished(pod):
            return
        meta = pod["metadata"]
        uid = meta.get("uid", "")
        recorded = {s.get("name"): s for s in (pod.get("status") or {}).get("deviceClaimStatuses") or []}
        statuses = dict(recorded)
        for entry, source, value in claim_sources(pod):
            if source == "claimName" or entry in statuses:
                continue
            existing = self.owned.get(uid, {}).get(entry)
            if existing:
                statuses[entry] = {"name": entry, "deviceClaimName": existing}
                continue
            body = self._claim_for(pod, entry, source, value)
            if body is None:
                continue
            try:
                created = await self.client.create(CLAIMS, body)
            except errors.StatusError as exc:
                await self._report(pod, entry, f"deviceClaims[{entry}]: {exc.message}")
                continue
            self._on_claim(ADDED, created)
            statuses[entry] = {"name": entry, "deviceClaimName": created["metadata"]["name"]}
        if statuses == recorded:
            return
        order = [entry for entry, _, _ in claim_sources(pod)]
        listed = sorted(statuses.values(), key=lambda s: order.index(s["name"]) if s["name"] in order else len(order))
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": {"deviceClaimStatuses": listed}}
        try:
            written = await self.client.patch(PODS, key[0], key[1], patch, subresource="status")
        except errors.StatusError as exc:
            if exc.code == 404:
                return
            raise
        self.pods[key] = written

    def _claim_for(self, pod: dict, entry: str, source: str, value) -> dict | None:
        meta = pod["metadata"]
        namespace = meta.get("namespace", "")
        labels: dict = {}
        annotations: dict = {}
        if source == "claimTemplateName":
            template = self.templates.get((namespace, value))
            if template is None:
                asyncio.ensure_future(self._report(pod, entry, f'deviceClaims[{entry}]: DeviceClaimTemplate.devmgmtproto.k8s.io "{value}" not found'))
                return None
            template_meta = (template.get("spec") or {}).get("metadata") or {}
            labels = dict(template_meta.get("labels") or {})
            annotations = dict(template_meta.get("annotations") or {})
            spec = (template.get("spec") or {}).get("spec") or {}
        else:
            spec = value
        annotations[POD_CLAIM_NAME] = entry
        claim_meta = {
            "generateName": f"{meta['name']}-{entry}-", "namespace": namespace, "annotations": annotations,
            "ownerReferences": [owner_reference(pod)],
            # the allocation finalizer from the start: the scheduler's status write is then the
            # claim's only write (the allocator removes it from a claim deleted unallocated)
            "finalizers": [ALLOCATION_FINALIZER],
        }  # fmt: skip
        if labels:
            claim_meta["labels"] = labels
        return {"apiVersion": API_VERSION, "kind": "DeviceClaim", "metadata": claim_meta, "spec": spec}

    async def _release(self, text: str) -> None:
        namespace, name = text.split("/", 1)
        gone = self._released.pop((namespace, name), set())
        if not gone:
            return
        try:
            claim = await self.client.get(CLAIMS, namespace, name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return
            raise
        names = (claim.get("status") or {}).get("podNames") or []
        owner = controller_pod_uid(claim)
        done = set()
        for pod_name in gone & set(names):
            if await self._done(namespace, pod_name, name_of_claim=name, owner=owner):
                done.add(pod_name)
        kept = [n for n in names if n not in done]
        if kept == names:
            return
        patch = {"metadata": {"resourceVersion": claim["metadata"]["resourceVersion"]}, "status": {"podNames": kept or None}}
        try:
            written = await self.client.patch(CLAIMS, namespace, name, patch, subresource="status")
        except errors.StatusError as exc:
            if exc.code == 409:
                self._released.setdefault((namespace, name), set()).update(gone)
            if exc.code != 404:
                raise
            return
        self.claims[(namespace, name)] = written

    async def _done(self, namespace: str, name: str, *, name_of_claim: str, owner: str = "") -> bool:
        """Whether the pod of that name no longer uses the claim's devices: deleted, finished, or
        replaced by another pod of the same name that does not use this claim (``podNames`` are
        names; kube's ``reservedFor`` holds uids)."""
        pod = self.pods.get((namespace, name))
        if pod is None or not self._uses(pod, name_of_claim, owner):
            try:
                pod = await self.client.get(PODS, namespace, name)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
                return True
        return is_finished(pod) or not self._uses(pod, name_of_claim, owner)

    @staticmethod
    def _uses(pod: dict, claim_name: str, owner: str) -> bool:
        """Whether ``pod`` uses the claim: the pod it was made for (``owner``), or one naming it."""
        if owner:
            return pod["metadata"].get("uid") == owner
        return claim_name in claim_names(pod).values()

    async def _report(self, pod: dict, entry: str, message: str) -> None:
        meta = pod["metadata"]
        seen = (meta.get("uid", ""), entry, message)
        if seen in self._reported:
            return
        self._reported.add(seen)
        now = clocks.rfc3339(self.clock.now())
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": meta.get("namespace", "default")},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"], "uid": meta.get("uid", "")},
            "reason": FAILED,
            "message": message[:1024],
            "type": "Warning",
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            await self.client.create_event(event)
        except errors.StatusError as exc:  # Events are best effort
            log.debug("could not record event on pod %s: %s", meta["name"], exc)
