"""What a pod gets at create time beside what it was sent, as kube-apiserver v1.32 with its default
admission plugins gives it: container defaults, the ServiceAccount plugin's account and token
volume, the DefaultTolerationSeconds plugin's tolerations; and PodTemplate objects' defaults."""

from __future__ import annotations

import re

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import pods as pod_rules
from mockapi.registry import serviceaccounts, workloads
from mockapi.registry.options import DeleteOptions, WriteOptions

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME = re.compile(r"^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$")
DEFAULT_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
]


@pytest.fixture
def server():
    return app_.build(clock=FakeClock(), uids=SequentialUIDs())


def create(server, body: dict, kind: str = "Pod", namespace: str = "default", dry_run: bool = False) -> dict:
    rt = server.types.by_kind("", "v1", kind)
    opts = WriteOptions(dry_run=True) if dry_run else WriteOptions()
    return orjson.loads(server.registry.create(rt, namespace, body, opts).raw)


def pod(name: str = "x", **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "x", "image": "nginx"}], **spec}}


def account(server, name: str, **fields) -> None:
    create(server, {"metadata": {"name": name}, **fields}, kind="ServiceAccount")


def test_kubectl_run_pod_gets_what_a_real_server_gives(server):
    spec = create(server, {"metadata": {"name": "x", "labels": {"run": "x"}}, "spec": {"containers": [{"name": "x", "image": "nginx"}]}})["spec"]
    volume = spec["volumes"][0]["name"]
    assert VOLUME.match(volume)
    assert spec == {
        "containers": [{
            "image": "nginx", "imagePullPolicy": "Always", "name": "x", "resources": {},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": TOKEN_PATH, "name": volume, "readOnly": True}],
        }],
        "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
        "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
        "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": DEFAULT_TOLERATIONS,
        "volumes": [serviceaccounts.token_volume(volume)],
    }  # fmt: skip


def test_the_admission_plugins_changes_are_owned_by_no_field_manager(server):
    """Mutating admission runs after the request's field ownership is recorded (kube's create handler)."""
    created = create(server, pod())
    fields = orjson.dumps(created["metadata"]["managedFields"][0]["fieldsV1"]).decode()
    assert "f:imagePullPolicy" in fields and "f:resources" in fields  # defaulting, before ownership
    for admitted in ("f:volumes", "f:tolerations", "f:serviceAccountName", "f:volumeMounts"):
        assert admitted not in fields


@pytest.mark.parametrize("image, policy", [("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.27", "IfNotPresent"), ("nginx@sha256:" + "a" * 64, "IfNotPresent")])
def test_each_container_kind_gets_an_image_pull_policy_and_resources(server, image, policy):
    body = pod(initContainers=[{"name": "init", "image": image}])
    body["spec"]["containers"][0]["image"] = image
    spec = create(server, body)["spec"]
    for container in spec["initContainers"] + spec["containers"]:
        assert container["imagePullPolicy"] == policy and container["resources"] == {}
    spec = {"ephemeralContainers": [{"name": "debug", "image": image}]}
    workloads.set_template_defaults({"spec": spec})  # SetDefaults_EphemeralContainer; they come through a subresource
    assert spec["ephemeralContainers"][0]["imagePullPolicy"] == policy and spec["ephemeralContainers"][0]["resources"] == {}


def test_requests_default_to_limits_on_pods_and_not_on_templates(server):
    body = pod()
    body["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}
    created = create(server, body)
    assert created["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert created["status"]["qosClass"] == "Burstable"


def test_volume_probe_and_env_defaults(server):
    body = pod(volumes=[{"name": "c", "configMap": {"name": "x"}}, {"name": "s", "secret": {"secretName": "x"}}, {"name": "h", "hostPath": {"path": "/x"}},
                        {"name": "d", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}}])  # fmt: skip
    body["spec"]["containers"][0].update(
        livenessProbe={"httpGet": {"port": 80}},
        env=[{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
    )
    spec = create(server, body)["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["c"]["configMap"]["defaultMode"] == volumes["s"]["secret"]["defaultMode"] == volumes["d"]["downwardAPI"]["defaultMode"] == 420
    assert volumes["h"]["hostPath"]["type"] == ""
    assert volumes["d"]["downwardAPI"]["items"][0]["fieldRef"] == {"apiVersion": "v1", "fieldPath": "metadata.name"}
    container = spec["containers"][0]
    assert container["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert container["env"][1]["valueFrom"]["resourceFieldRef"]["divisor"] == "0"


# ------------------------------------------------------------------ ServiceAccount admission
def test_a_pod_naming_a_missing_service_account_is_forbidden(server):
    with pytest.raises(errors.StatusError) as caught:
        create(server, pod(serviceAccountName="robot"))
    assert caught.value.code == 403
    assert str(caught.value) == 'pods "x" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found'


def test_a_pods_service_account_and_its_deprecated_twin(server):
    account(server, "robot")
    assert create(server, pod("a", serviceAccountName="robot"))["spec"]["serviceAccount"] == "robot"
    assert create(server, pod("b", serviceAccount="robot"))["spec"]["serviceAccountName"] == "robot"


@pytest.mark.parametrize(
    "pod_says, account_says, mounted",
    [(None, None, True), (False, None, False), (None, False, False), (True, False, True), (False, True, False)],
)
def test_the_pods_automount_choice_wins_over_its_accounts(server, pod_says, account_says, mounted):
    account(server, "robot", **({} if account_says is None else {"automountServiceAccountToken": account_says}))
    extra = {} if pod_says is None else {"automountServiceAccountToken": pod_says}
    spec = create(server, pod(serviceAccountName="robot", **extra))["spec"]
    assert ("volumes" in spec) is mounted
    assert ("volumeMounts" in spec["containers"][0]) is mounted


def test_the_token_is_mounted_in_every_container_without_a_mount_at_its_path(server):
    own = {"name": "mine", "mountPath": TOKEN_PATH}
    body = pod(initContainers=[{"name": "init", "image": "busybox"}], volumes=[{"name": "mine", "emptyDir": {}}])
    body["spec"]["containers"].append({"name": "own", "image": "busybox", "volumeMounts": [own]})
    spec = create(server, body)["spec"]
    volume = spec["volumes"][1]["name"]
    assert spec["initContainers"][0]["volumeMounts"] == spec["containers"][0]["volumeMounts"] == [{"mountPath": TOKEN_PATH, "name": volume, "readOnly": True}]
    assert spec["containers"][1]["volumeMounts"] == [own]


def test_an_existing_token_volume_is_reused_and_no_volume_added_when_no_container_needs_one(server):
    body = pod(volumes=[{"name": "kube-api-access-abcde", "emptyDir": {}}])
    spec = create(server, body)["spec"]
    assert [v["name"] for v in spec["volumes"]] == ["kube-api-access-abcde"]
    assert spec["containers"][0]["volumeMounts"][0]["name"] == "kube-api-access-abcde"
    body = pod("y")
    body["spec"]["containers"][0]["volumeMounts"] = [{"name": "v", "mountPath": TOKEN_PATH}]
    body["spec"]["volumes"] = [{"name": "v", "emptyDir": {}}]
    assert [v["name"] for v in create(server, body)["spec"]["volumes"]] == ["v"]


def test_the_accounts_image_pull_secrets_unless_the_pod_has_its_own(server):
    account(server, "puller", imagePullSecrets=[{"name": "registry"}])
    assert create(server, pod("a", serviceAccountName="puller"))["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    assert create(server, pod("b", serviceAccountName="puller", imagePullSecrets=[{"name": "own"}]))["spec"]["imagePullSecrets"] == [{"name": "own"}]


def test_a_mirror_pod_is_left_as_sent(server):
    body = pod()
    body["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    spec = create(server, body)["spec"]
    assert "serviceAccountName" not in spec and "volumes" not in spec
    assert spec["tolerations"] == DEFAULT_TOLERATIONS  # DefaultTolerationSeconds knows no mirror pods


def test_a_dry_run_is_admitted_alike(server):
    spec = create(server, pod(serviceAccountName="default"), dry_run=True)["spec"]
    assert VOLUME.match(spec["volumes"][0]["name"]) and spec["tolerations"] == DEFAULT_TOLERATIONS


# ------------------------------------------------------------------ DefaultTolerationSeconds
@pytest.mark.parametrize(
    "given, added",
    [
        ([], DEFAULT_TOLERATIONS),
        ([{"operator": "Exists"}], []),  # no key, no effect: tolerates everything
        ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}], DEFAULT_TOLERATIONS[1:]),
        ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}], DEFAULT_TOLERATIONS[:1]),
        ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}], DEFAULT_TOLERATIONS),
        ([{"operator": "Exists", "effect": "NoExecute"}], []),
    ],
)
def test_default_tolerations_unless_already_tolerated(server, given, added):
    assert create(server, pod(tolerations=given))["spec"]["tolerations"] == given + added


def test_an_update_that_drops_the_default_tolerations_gets_them_back(server):
    created = create(server, pod())
    created["spec"].pop("tolerations")
    created["metadata"]["labels"] = {"changed": "yes"}
    rt = server.types.by_kind("", "v1", "Pod")
    updated = orjson.loads(server.registry.update(rt, "default", "x", created, WriteOptions()).raw)
    assert updated["spec"]["tolerations"] == DEFAULT_TOLERATIONS and updated["metadata"]["labels"] == {"changed": "yes"}


def test_default_tolerations_directly():
    obj = {"spec": {"tolerations": [{"key": "", "effect": ""}]}}
    pod_rules.default_tolerations(obj)
    assert obj["spec"]["tolerations"] == [{"key": "", "effect": ""}]


# ------------------------------------------------------------------ PodTemplate
def test_a_pod_templates_template_gets_template_defaults(server):
    body = {"metadata": {"name": "t"}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}
    spec = create(server, body, kind="PodTemplate")["template"]["spec"]
    assert spec["containers"][0]["imagePullPolicy"] == "IfNotPresent" and spec["containers"][0]["resources"] == {}
    assert "tolerations" not in spec and "serviceAccountName" not in spec  # admission is for pods only


def test_the_token_volume_suffix_is_five_characters_of_the_name_alphabet_each_drawn_evenly():
    from mockapi.registry import serviceaccounts

    suffixes = [serviceaccounts._suffix() for _ in range(5000)]
    assert all(len(s) == 5 and set(s) <= set(serviceaccounts._NAME_CHARS) for s in suffixes)
    for position in range(5):
        counts = [sum(1 for s in suffixes if s[position] == c) for c in serviceaccounts._NAME_CHARS]
        assert min(counts) > 5000 / 27 / 2  # every character, at every position, about as often


def test_the_default_priority_class_follows_every_change_of_the_classes(server):
    """The Priority admission remembers the default class between pod creates (Store.stamp)."""
    classes = server.types.by_kind("scheduling.k8s.io", "v1", "PriorityClass")
    priorities = [create(server, pod("before"))["spec"]["priority"]]
    server.registry.create(classes, "", {"metadata": {"name": "high"}, "value": 1000, "globalDefault": True}, WriteOptions())
    priorities.append(create(server, pod("default-high"))["spec"]["priority"])
    high = server.registry.get(classes, "", "high").load()
    server.registry.update(classes, "", "high", {**high, "globalDefault": False}, WriteOptions())
    priorities.append(create(server, pod("no-default"))["spec"]["priority"])
    server.registry.create(classes, "", {"metadata": {"name": "low"}, "value": 7, "globalDefault": True}, WriteOptions())
    priorities.append(create(server, pod("default-low"))["spec"].get("priorityClassName"))
    server.registry.delete(classes, "", "low", DeleteOptions())
    priorities.append(create(server, pod("after"))["spec"]["priority"])
    assert priorities == [0, 1000, 0, "low", 0]
