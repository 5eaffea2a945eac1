"""Built-in kinds' defaults against what a real kube-apiserver returned for the same request.

Each file in ``tests/manifests/real-responses/`` is one recorded exchange: ``sent`` (what a client
sent on create — for ``kubectl apply``, its last-applied-configuration) and ``returned`` (what the
server answered or later served), with the source and the kube version in the file. The test
creates ``sent`` in an in-process mockapi and compares the two objects field by field, leaving
out what differs by nature. What is left out, per kind, is in ``IGNORED`` with the reason; what
every kind leaves out is in ``ALWAYS_IGNORED``.

``tests/manifests/real-responses/kube-defaults.yaml`` holds a second kind of sample, one per
document (each ``name``d): kube's own
expectations of its defaulting functions (``pkg/apis/<group>/v1/defaults_test.go``: an object in,
the defaulted object out), for the kinds no recorded response was found for. They are checked the
same way. A recording that shows only part of the object (the documentation's excerpts) names
the parts it shows in ``compared``.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest
import yaml

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry.options import WriteOptions

RESPONSES = Path(__file__).resolve().parent / "manifests" / "real-responses"

# Differences by nature, for every kind: identity and bookkeeping the server makes up
# (uid, resourceVersion, times, selfLink, generation after later updates), field ownership (the
# recordings drop or keep managedFields), and status, which controllers write (each kind below
# lists the status fields the API server itself sets, which are compared).
ALWAYS_IGNORED = (
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.creationTimestamp",
    "metadata.selfLink",
    "metadata.managedFields*",
    "metadata.generation",
    "status*",
    # Go's encoding of an embedded ObjectMeta's zero time until kube v1.33 (`creationTimestamp:
    # null` in every pod template); a client decodes it and an absent field alike.
    "*.metadata.creationTimestamp",
)
# Fields compared although under an ignored prefix: status the API server sets on create.
COMPARED_STATUS = {
    "Service": ("status.loadBalancer",),
    "PersistentVolumeClaim": ("status.phase",),
}
# Per sample (file name): (pattern, why) for what the recording has and mockapi cannot, or the reverse.
IGNORED: dict[str, tuple[tuple[str, str], ...]] = {
    "deployment": (
        ("metadata.annotations.deployment.kubernetes.io/revision", "written by the deployment controller, which mockapi does not run"),
    ),
    "job": (
        ("*controller-uid*", "the selector and labels carry the Job's uid, made up by each server (test_a_jobs_generated_selector_and_labels_carry_its_uid)"),
    ),
    "service": (
        ("spec.clusterIP", "allocated from the cluster's range: the address differs by nature"),
        ("spec.clusterIPs.*", "allocated, as clusterIP"),
        ("metadata.labels.app.kubernetes.io/instance", "added later by Argo CD's server-side apply, not by the create"),
    ),
    "service-2018": (
        ("spec.clusterIP", "allocated from the cluster's range: the address differs by nature"),
        ("spec.clusterIPs.*", "allocated, as clusterIP"),
    ),
    "persistentvolumeclaim": (
        ("metadata.annotations.volume.beta.kubernetes.io/storage-provisioner", "written by the volume controller (no provisioner runs in mockapi)"),
    ),
    "pod": (
        ("spec.nodeName", "the scheduler's choice (no scheduler runs in this in-process test)"),
        ("spec.volumes.1.name", "kube-api-access-<5 random characters>, made up by each server"),
        ("spec.containers.0.volumeMounts.1.name", "the same random volume name"),
    ),
    "serviceaccount": (
        ("secrets*", "the token Secret the token controller made before v1.24; kube no longer makes one"),
    ),
}
# Per sample: defaults kube added after the recording was made, or that the recording pruned, so
# not compared with it; mockapi must give v1.32's value instead (from kube's defaulting code).
NEWER: dict[str, dict[str, Any]] = {
    "service": {
        # pruned from the 2022 recording; its managedFields list it as set by the create
        "spec.internalTrafficPolicy": "Cluster",
    },
    "service-2018": {
        # dual-stack fields, v1.20 on (SetDefaults_Service and the IP allocator)
        "spec.ipFamilies.0": "IPv4",
        "spec.ipFamilyPolicy": "SingleStack",
        "spec.clusterIPs.0": None,
        "spec.internalTrafficPolicy": "Cluster",  # v1.22 on
    },
    "statefulset": {
        # v1.23 on, default on from v1.27 (StatefulSetAutoDeletePVC)
        "spec.persistentVolumeClaimRetentionPolicy.whenDeleted": "Retain",
        "spec.persistentVolumeClaimRetentionPolicy.whenScaled": "Retain",
        # defaulted from v1.13 on (BlockVolume beta)
        "spec.volumeClaimTemplates.0.spec.volumeMode": "Filesystem",
    },
    "persistentvolumeclaim": {
        "spec.volumeMode": "Filesystem",  # v1.13 on
    },
}


def load_samples() -> list[tuple[str, dict]]:
    samples = []
    for path in sorted(RESPONSES.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            samples.append((doc.get("name") or (f"{path.stem}[{index}]" if index else path.stem), doc))
    return samples


SAMPLES = load_samples()


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted paths to leaves (list items by index; empty maps and lists are leaves)."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from flatten(item, f"{prefix}.{index}")
    else:
        yield prefix, value


def _ignored(name: str, kind: str, path: str) -> bool:
    if path in NEWER.get(name, {}):
        return True
    if any(path == p or path.startswith(p + ".") for p in COMPARED_STATUS.get(kind, ())):
        return False
    patterns = ALWAYS_IGNORED + tuple(p for p, _ in IGNORED.get(name, ()))
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def differences(name: str, real: dict, mock: dict, compared: list[str] | None = None) -> list[str]:
    """What differs between the real response and mockapi's, outside the ignored paths (and,
    for a recording that shows only part of the object, inside ``compared``); and where mockapi
    lacks a default kube added after the recording."""
    kind = real["kind"]

    def kept(path: str) -> bool:
        inside = compared is None or any(path == c or path.startswith(c + ".") for c in compared)
        return inside and not _ignored(name, kind, path)

    want = {p: v for p, v in flatten(real) if kept(p)}
    got = {p: v for p, v in flatten(mock) if kept(p)}
    leaves = dict(flatten(mock))
    found = [
        f"newer   {path}: kube v1.32 gives {value!r}, mockapi {leaves.get(path)!r}"
        for path, value in NEWER.get(name, {}).items()
        if path not in leaves or (value is not None and leaves[path] != value)
    ]
    for path in sorted(want.keys() | got.keys()):
        if path not in got:
            found.append(f"missing {path}: {want[path]!r}")
        elif path not in want:
            found.append(f"extra   {path}: {got[path]!r}")
        elif want[path] != got[path]:
            found.append(f"differs {path}: real {want[path]!r}, mockapi {got[path]!r}")
    return found


@pytest.fixture(scope="module")
def server():
    return app_.build(clock=FakeClock(), uids=SequentialUIDs())


# Versions mockapi does not serve, sent as the version it stores (kube converts them alike).
SERVED_AS = {"apps/v1beta2": "apps/v1", "apps/v1beta1": "apps/v1", "extensions/v1beta1": "apps/v1"}


def create(server, body: dict) -> dict:
    body = orjson.loads(orjson.dumps(body))
    body["apiVersion"] = SERVED_AS.get(body["apiVersion"], body["apiVersion"])
    group, _, version = body["apiVersion"].rpartition("/")
    rt = server.types.by_kind(group, version, body["kind"])
    namespace = body["metadata"].get("namespace", "default") if rt.namespaced else ""
    if namespace:
        try:
            server.registry.create(server.types.by_kind("", "v1", "Namespace"), "", {"metadata": {"name": namespace}}, WriteOptions())
        except errors.StatusError as error:
            assert error.code == 409, error
    return orjson.loads(server.registry.create(rt, namespace, body, WriteOptions()).raw)


@pytest.mark.parametrize("name, sample", SAMPLES, ids=[name for name, _ in SAMPLES])
def test_mockapi_defaults_what_the_real_server_defaulted(server, name, sample):
    returned = create(server, sample["sent"])
    found = differences(name, sample["returned"], returned, sample.get("compared"))
    assert not found, f"{name} ({sample['source']}, kube {sample['kubeVersion']}):\n" + "\n".join(found)


def test_every_sample_names_its_source_and_kube_version():
    for name, sample in SAMPLES:
        assert sample.get("source") and sample.get("kubeVersion"), name
        assert sample["sent"]["kind"] == sample["returned"]["kind"], name
    assert set(IGNORED) | set(NEWER) <= {name for name, _ in SAMPLES}


def test_a_jobs_generated_selector_and_labels_carry_its_uid(server):
    """What ``IGNORED["Job"]`` leaves out of the comparison: the values are the Job's own uid."""
    sample = dict(SAMPLES)["job"]
    job = create(server, {**sample["sent"], "metadata": {**sample["sent"]["metadata"], "name": "uid-check"}})
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    for labels in (job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"]):
        assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid


# --------------------------------------------- what the comparison found, case by case
def _workload(kind: str, name: str, **spec: Any) -> dict:
    template = {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": template, **spec}}  # fmt: skip


def update(server, body: dict) -> dict:
    group, _, version = body["apiVersion"].rpartition("/")
    rt = server.types.by_kind(group, version, body["kind"])
    return orjson.loads(server.registry.update(rt, "default", body["metadata"]["name"], body, WriteOptions()).raw)


@pytest.mark.parametrize(
    "image, policy",
    [
        ("busybox", "Always"),
        ("busybox:latest", "Always"),
        ("busybox:1.36", "IfNotPresent"),
        ("registry.local:5000/team/app", "Always"),
        ("registry.local:5000/team/app:v2", "IfNotPresent"),
        ("busybox@sha256:" + "a" * 64, "IfNotPresent"),
        ("busybox:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_a_templates_image_pull_policy_follows_the_tag(image, policy):
    from mockapi.registry.workloads import image_pull_policy

    assert image_pull_policy(image) == policy


def test_template_defaults_keep_what_the_client_gave(server):
    body = _workload("Deployment", "kept")
    body["spec"]["template"]["spec"].update(serviceAccount="legacy", containers=[{"name": "c", "image": "busybox", "imagePullPolicy": "Never", "resources": {"limits": {"cpu": "1"}}}])
    spec = create(server, body)["spec"]["template"]["spec"]
    assert spec["containers"][0]["imagePullPolicy"] == "Never"
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "1"}}  # no requests from limits in a template
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "legacy"
    assert "enableServiceLinks" not in spec


def test_a_daemon_sets_template_generation_counts_template_changes_only(server):
    made = create(server, _workload("DaemonSet", "gen"))
    assert made["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    made["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = "7"  # the client's value is not kept
    made["spec"]["minReadySeconds"] = 5
    changed = update(server, made)
    assert changed["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.36"
    rolled = update(server, changed)
    assert rolled["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    assert rolled["metadata"]["generation"] == 3


def test_a_stateful_sets_explicit_rolling_update_gets_no_rolling_update_block(server):
    """SetDefaults_StatefulSet adds rollingUpdate (partition 0) only when it sets the type itself."""
    made = create(server, {**_workload("StatefulSet", "explicit", serviceName="explicit", updateStrategy={"type": "RollingUpdate"})})
    assert made["spec"]["updateStrategy"] == {"type": "RollingUpdate"}


def test_stateful_set_claim_templates_are_served_as_claims(server):
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    made = create(server, _workload("StatefulSet", "claims", serviceName="claims", volumeClaimTemplates=[claim]))
    served = made["spec"]["volumeClaimTemplates"][0]
    assert served["apiVersion"] == "v1" and served["kind"] == "PersistentVolumeClaim"
    assert served["spec"]["volumeMode"] == "Filesystem" and served["status"] == {"phase": "Pending"}


def test_job_defaults_that_depend_on_other_fields(server):
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}
    indexed = create(server, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "per-index", "namespace": "default"},
                              "spec": {"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1, "template": template}})  # fmt: skip
    assert indexed["spec"]["backoffLimit"] == 2**31 - 1 and indexed["spec"]["manualSelector"] is False
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    failing = create(server, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "policy", "namespace": "default"},
                              "spec": {"podFailurePolicy": policy, "template": template}})  # fmt: skip
    assert failing["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]
    assert failing["spec"]["podReplacementPolicy"] == "Failed" and failing["spec"]["backoffLimit"] == 6


def test_a_cron_jobs_job_template_gets_pod_defaults_but_no_job_defaults(server):
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}
    made = create(server, {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cron", "namespace": "default"},
                           "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}})  # fmt: skip
    job_spec = made["spec"]["jobTemplate"]["spec"]
    assert set(job_spec) == {"template"}
    assert job_spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_empty_network_policy_rules_are_left_out_and_a_false_global_default_too(server):
    made = create(server, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np", "namespace": "default"},
                           "spec": {"podSelector": {}, "ingress": [{"from": [], "ports": []}], "egress": []}})  # fmt: skip
    assert made["spec"] == {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]}
    pc = create(server, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc-false"}, "value": 5, "globalDefault": False})
    assert "globalDefault" not in pc
