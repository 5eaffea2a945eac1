"""batch/v1 Job and CronJob end to end: kubectl create job|cronjob (protobuf bodies), create job
--from=cronjob, get -o wide, describe, apply --server-side, and the kubernetes client; kube's
defaults, generated selector and refusals. No controller runs them."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.e2e

TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}


@pytest.fixture
def batch(api):
    return client.BatchV1Api(api)


def invalid(call) -> str:
    with pytest.raises(ApiException) as caught:
        call()
    assert caught.value.status == 422, caught.value.body
    return caught.value.body


def test_a_job_gets_kubes_defaults_and_a_selector_made_from_its_uid(batch):
    job = batch.create_namespaced_job("default", {"metadata": {"name": "pi"}, "spec": {"template": TEMPLATE}})
    uid = job.metadata.uid
    assert (job.spec.completions, job.spec.parallelism, job.spec.backoff_limit, job.spec.completion_mode, job.spec.suspend, job.spec.pod_replacement_policy) == (
        1, 1, 6, "NonIndexed", False, "TerminatingOrFailed")
    generated = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi", "controller-uid": uid, "job-name": "pi"}
    assert job.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": uid}
    assert job.spec.template.metadata.labels == generated and job.metadata.labels == generated
    assert job.metadata.generation == 1


def test_job_refusals(batch, http):
    always = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    body = invalid(lambda: batch.create_namespaced_job("default", {"metadata": {"name": "a"}, "spec": {"template": always}}))
    assert 'spec.template.spec.restartPolicy: Unsupported value: \\"Always\\": supported values: \\"OnFailure\\", \\"Never\\"' in body
    chosen = {"metadata": {"name": "b"}, "spec": {"selector": {"matchLabels": {"x": "y"}}, "template": {**TEMPLATE, "metadata": {"labels": {"x": "y"}}}}}
    assert "`selector` not auto-generated" in invalid(lambda: batch.create_namespaced_job("default", chosen))
    chosen["spec"]["manualSelector"] = True
    assert batch.create_namespaced_job("default", chosen).spec.selector.match_labels == {"x": "y"}
    batch.create_namespaced_job("default", {"metadata": {"name": "c"}, "spec": {"template": TEMPLATE}})
    assert "spec.completions: Invalid value: 3: field is immutable" in invalid(lambda: batch.patch_namespaced_job("c", "default", {"spec": {"completions": 3}}))
    assert "spec.backoffLimit: Invalid value: -1" in invalid(lambda: batch.create_namespaced_job("default", {"metadata": {"name": "d"}, "spec": {"backoffLimit": -1, "template": TEMPLATE}}))


def test_kubectl_create_job_and_cronjob_get_and_describe(kubectl, batch):
    kubectl("create", "job", "once", "--image=busybox", "--", "echo", "hi")
    kubectl("create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *", "--", "date")
    kubectl("create", "job", "manual", "--from=cronjob/nightly")
    once = batch.read_namespaced_job("once", "default")
    assert once.spec.template.spec.containers[0].command == ["echo", "hi"] and once.spec.template.spec.restart_policy == "Never"
    nightly = batch.read_namespaced_cron_job("nightly", "default")
    assert (nightly.spec.schedule, nightly.spec.concurrency_policy, nightly.spec.suspend, nightly.spec.successful_jobs_history_limit, nightly.spec.failed_jobs_history_limit) == (
        "0 3 * * *", "Allow", False, 3, 1)
    manual = batch.read_namespaced_job("manual", "default")
    assert manual.metadata.owner_references[0].name == "nightly" and manual.spec.template.spec.containers[0].command == ["date"]
    jobs = kubectl("get", "jobs", "-o", "wide").stdout.splitlines()
    assert jobs[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert {line.split()[0]: line.split()[1:3] for line in jobs[1:]}["once"] == ["Running", "0/1"]
    crons = kubectl("get", "cronjobs").stdout.splitlines()
    assert crons[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert crons[1].split()[:8] == ["nightly", "0", "3", "*", "*", "*", "<none>", "False"]
    assert "Completion Mode:  NonIndexed" in kubectl("describe", "job", "once").stdout


def test_cronjob_refusals_and_server_side_apply(kubectl, batch):
    body = {"metadata": {"name": "bad"}, "spec": {"schedule": "every day", "jobTemplate": {"spec": {"template": TEMPLATE}}}}
    assert 'spec.schedule: Invalid value: \\"every day\\": unparseable cron expression' in invalid(lambda: batch.create_namespaced_cron_job("default", body))
    manifest = ("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: tick}\nspec:\n  schedule: '@hourly'\n  jobTemplate:\n    spec:\n"
                "      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: c, image: busybox}]\n")  # fmt: skip
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=manifest).stdout
    kubectl("apply", "--server-side", "-f", "-", stdin=manifest.replace("@hourly", "@daily"))
    tick = batch.read_namespaced_cron_job("tick", "default")
    assert (tick.spec.schedule, tick.metadata.generation) == ("@daily", 2)
