"""The real kubectl against a server on a free port, with a cold discovery cache per test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISTAKES = ROOT / "tests" / "manifests" / "classes-with-mistakes.yaml"  # as the prototype's classes make them
pytestmark = pytest.mark.e2e


def test_apply_testdata_creates_everything_and_a_second_apply_changes_nothing(kubectl):
    # As on a real cluster, kubectl maps every document before applying any, so a CRD and its
    # objects cannot be created by one invocation (PROTOCOL.md G25): the vendor CRD goes first.
    crd = kubectl("apply", "-f", str(ROOT / "testdata" / "01-foozer-crd.yaml"))
    assert crd.stdout.strip() == "customresourcedefinition.apiextensions.k8s.io/foozerconfigs.foozer.example.com created"
    first = kubectl("apply", "-f", str(ROOT / "testdata"))
    lines = [line for line in first.stdout.splitlines() if "foozerconfigs.foozer.example.com" not in line]
    assert lines and all(line.endswith(" created") for line in lines), first.stdout
    second = kubectl("apply", "-f", str(ROOT / "testdata"))
    assert all(line.endswith(" unchanged") for line in second.stdout.splitlines()), second.stdout
    assert len(second.stdout.splitlines()) == len(lines) + 1  # the CRD applied first
    listed = kubectl("get", "devmgmt", "-o", "name").stdout.splitlines()
    kinds = {line.split("/")[0] for line in listed}
    assert {"devicedriver.devmgmtproto.k8s.io", "deviceclass.devmgmtproto.k8s.io", "devicepool.devmgmtproto.k8s.io", "deviceclaim.devmgmtproto.k8s.io"} <= kinds


def test_the_prototypes_manifests_are_refused_as_a_real_server_refuses_them(kubectl):
    result = kubectl("create", "-f", str(MISTAKES), check=False)
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "spec.contstraints"' in result.stderr
    result = kubectl("create", "--validate=false", "-f", str(MISTAKES), check=False)
    assert 'DeviceClass.devmgmtproto.k8s.io "nic-25Gbps" is invalid: [metadata.name: Invalid value: "nic-25Gbps"' in result.stderr


def test_validate_warn_creates_with_pruning_and_prints_warnings(kubectl, tmp_path):
    manifest = tmp_path / "typo.yaml"
    manifest.write_text(
        "apiVersion: devmgmtproto.k8s.io/v1alpha1\nkind: DeviceClass\nmetadata:\n  name: typo\n"
        "spec:\n  driver: d\n  deviceType: gpu\n  contstraints: x\n"
    )
    result = kubectl("create", "--validate=warn", "-f", str(manifest))
    assert "deviceclass.devmgmtproto.k8s.io/typo created" in result.stdout
    assert 'Warning: unknown field "spec.contstraints"' in result.stderr
    assert "contstraints" not in kubectl("get", "deviceclass", "typo", "-o", "yaml").stdout


def test_everyday_verbs_on_our_kinds(kubectl):
    kubectl("apply", "-f", str(ROOT / "testdata" / "00-namespaces.yaml"), "-f", str(ROOT / "testdata" / "10-drivers.yaml"), "-f", str(ROOT / "testdata" / "20-classes.yaml"))
    assert "labeled" in kubectl("label", "deviceclass", "vlan-2000", "tier=gold").stdout
    assert kubectl("get", "deviceclasses", "-l", "tier=gold", "-o", "name").stdout.split() == ["deviceclass.devmgmtproto.k8s.io/vlan-2000"]
    assert "patched" in kubectl("patch", "deviceclass", "vlan-2000", "--type=merge", "-p", '{"spec":{"driver":"sriov-nic"}}').stdout
    got = json.loads(kubectl("get", "deviceclass", "vlan-2000", "-o", "json").stdout)
    assert got["spec"]["driver"] == "sriov-nic" and got["metadata"]["generation"] == 2
    strategic = kubectl("patch", "deviceclass", "vlan-2000", "-p", '{"spec":{"driver":"x"}}', check=False)
    assert strategic.returncode == 1 and "application/strategic-merge-patch+json is not supported" in strategic.stderr
    missing = kubectl("get", "deviceclass", "nope", check=False)
    assert missing.returncode == 1 and 'deviceclasses.devmgmtproto.k8s.io "nope" not found' in missing.stderr
    assert "deleted" in kubectl("delete", "deviceclass", "vlan-2000").stdout
    assert "condition met" in kubectl("wait", "--for=condition=established", "crd/deviceclaims.devmgmtproto.k8s.io").stdout


def test_deleting_a_namespace_waits_until_its_content_is_gone(kubectl, tmp_path):
    manifest = tmp_path / "ns.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scratch\n---\n"
        "apiVersion: devmgmtproto.k8s.io/v1alpha1\nkind: DeviceClaim\nmetadata:\n  name: c\n  namespace: scratch\n"
        "spec:\n  claims:\n  - deviceClass: example.com-foozer-single\n"
    )
    kubectl("apply", "-f", str(manifest))
    assert 'namespace "scratch" deleted' in kubectl("delete", "namespace", "scratch").stdout
    gone = kubectl("get", "deviceclaims", "-n", "scratch", "c", check=False)
    assert gone.returncode == 1 and "not found" in gone.stderr


def test_explain_prints_the_field_documentation_of_the_seed_types(kubectl):
    explained = kubectl("explain", "deviceclaims.spec.claims").stdout
    assert "Claims contains the actual claim details" in explained


def test_get_prints_the_printer_columns_and_wide_ones(kubectl):
    kubectl("apply", "-f", str(ROOT / "testdata" / "10-drivers.yaml"), "-f", str(ROOT / "testdata" / "20-classes.yaml"))
    header = kubectl("get", "deviceclasses").stdout.splitlines()[0].split()
    assert header == ["NAME", "DRIVER", "TYPE", "ADMIN", "AGE"]
    wide = kubectl("get", "deviceclasses", "-o", "wide").stdout.splitlines()[0].split()
    assert wide[:5] == header and len(wide) > 5
    assert kubectl("get", "namespaces", "default").stdout.split()[:5] == ["NAME", "STATUS", "AGE", "default", "Active"]
    sorted_names = kubectl("get", "deviceclasses", "--sort-by=.spec.driver", "-o", "custom-columns=D:.spec.driver", "--no-headers").stdout.split()
    assert sorted_names == sorted(sorted_names) and sorted_names


def test_create_namespace_configmap_and_secret_send_protobuf_and_work(kubectl):
    assert "namespace/ci-ns created" in kubectl("create", "namespace", "ci-ns").stdout
    kubectl("create", "configmap", "settings", "-n", "ci-ns", "--from-literal=mode=fast")
    kubectl("create", "secret", "generic", "token", "-n", "ci-ns", "--from-literal=value=hunter2")
    assert kubectl("get", "configmap", "settings", "-n", "ci-ns", "-o", "jsonpath={.data.mode}").stdout == "fast"
    assert kubectl("get", "secret", "token", "-n", "ci-ns", "-o", "jsonpath={.data.value}").stdout == "aHVudGVyMg=="


def test_get_watch_prints_each_change_once(kubectl, live):
    import threading
    import time

    kubectl("apply", "-f", str(ROOT / "testdata" / "10-drivers.yaml"))
    result = {}

    def watch():
        result["out"] = kubectl("get", "devicedrivers", "vlan", "-w", "--request-timeout=3s", check=False).stdout

    thread = threading.Thread(target=watch)
    thread.start()
    time.sleep(1.0)
    kubectl("label", "devicedriver", "vlan", "seen=yes")
    thread.join(10)
    lines = result["out"].splitlines()
    assert lines[0].split()[0] == "NAME" and sum(1 for line in lines if line.startswith("vlan ")) == 2, result["out"]


def test_diff_is_quiet_on_an_unchanged_object_and_exits_1_on_a_change(kubectl, tmp_path):
    drivers = ROOT / "testdata" / "10-drivers.yaml"
    kubectl("apply", "-f", str(drivers))
    assert kubectl("diff", "-f", str(drivers)).stdout == ""
    changed = tmp_path / "drivers.yaml"
    changed.write_text(drivers.read_text().replace("- vlan\n", "- vlan\n- vlan-extra\n", 1))
    result = kubectl("diff", "-f", str(changed), check=False)
    assert result.returncode == 1
    assert any(line.startswith("+") and line.replace(" ", "") == "+-vlan-extra" for line in result.stdout.splitlines()), result.stdout
