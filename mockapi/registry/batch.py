"""batch/v1 Job and CronJob as kube-apiserver stores them: kube's defaults, the selector it
generates, and the validation clients meet. No controller runs them: a Job's status stays ``{}``
(STATUS Running, COMPLETIONS 0/N) and a CronJob never schedules one.

- **Job** (``SetDefaults_Job``, the job strategy's ``generateSelector``): ``parallelism`` and
  ``completions`` 1 when both are unset (``parallelism`` 1 otherwise), ``backoffLimit: 6``
  (2147483647 with ``backoffLimitPerIndex``), ``completionMode: NonIndexed``, ``suspend: false``,
  ``manualSelector: false``, ``podReplacementPolicy: TerminatingOrFailed`` (``Failed`` with a pod
  failure policy, whose ``onPodConditions`` get ``status: "True"``); the template as a workload's
  (``workloads.set_template_defaults``); unless ``manualSelector`` is true the selector is generated from the Job's uid
  and the template labelled with it (``batch.kubernetes.io/controller-uid``,
  ``batch.kubernetes.io/job-name``, ``controller-uid``, ``job-name``); the Job takes its template's
  labels, those included, when it has none. Validation: the template's
  ``restartPolicy`` is OnFailure or Never, counts are not negative, a selector given without
  ``manualSelector`` is refused, and ``selector``, ``template`` and ``completions`` are immutable.
- **CronJob** (``SetDefaults_CronJob``): ``concurrencyPolicy: Allow``, ``suspend: false``,
  ``successfulJobsHistoryLimit: 3``, ``failedJobsHistoryLimit: 1``; the job template's pod
  template as a Job's (its JobSpec gets no Job defaults, as in kube); ``schedule`` must be a cron
  expression of five fields or a ``@`` descriptor; the job template's ``restartPolicy`` is
  OnFailure or Never.
"""

from __future__ import annotations

import re
from typing import Any

from mockapi import errors
from mockapi.registry.strategy import Strategy, not_supported
from mockapi.registry.workloads import set_template_defaults

GROUP = "batch"
RESTART_POLICIES = ("OnFailure", "Never")
MAX_INT32 = 2**31 - 1
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_FIELD = re.compile(r"^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?)*$")


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


class JobStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {}
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        set_job_defaults(spec)
        if spec.get("manualSelector") is not True:
            _generate_selector(obj, spec)
        # SetDefaults_Job, run again when kube reads the stored Job: it takes its template's labels
        # (the generated ones included) when it has none of its own
        labels = _dict(_dict(_dict(spec.get("template")).get("metadata")).get("labels"))
        if labels and not obj["metadata"].get("labels"):
            obj["metadata"]["labels"] = dict(labels)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status" and isinstance(new.get("spec"), dict):
            set_job_defaults(new["spec"])
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = _restart_policy(spec, "spec.template.spec.restartPolicy")
        for key in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
            value = spec.get(key)
            if isinstance(value, int) and value < 0:
                problems.append(errors.FieldError("invalid", f"spec.{key}", "must be greater than or equal to 0", value=value))
        if old is None and spec.get("manualSelector") is not True and spec.get("selector") != _generated_selector(obj["metadata"].get("uid", "")):
            problems.append(errors.FieldError("invalid", "spec.selector", "`selector` not auto-generated", value=spec.get("selector")))
        if old is not None:
            before = _dict(old.get("spec"))
            for key in ("selector", "template", "completions"):
                if spec.get(key) != before.get(key) and not (key == "template" and spec.get("suspend")):
                    problems.append(errors.FieldError("invalid", f"spec.{key}", "field is immutable", value=spec.get(key)))
        return problems


def set_job_defaults(spec: dict) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    spec["completionMode"] = spec.get("completionMode") or "NonIndexed"
    spec.setdefault("suspend", False)
    failure_policy = spec.get("podFailurePolicy")
    for rule in _dict(failure_policy).get("rules") or []:
        for pattern in _dict(rule).get("onPodConditions") or []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    spec["podReplacementPolicy"] = spec.get("podReplacementPolicy") or ("Failed" if failure_policy else "TerminatingOrFailed")
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    set_template_defaults(spec.get("template"))


def _generated_selector(uid: str) -> dict:
    return {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


def _generate_selector(obj: dict, spec: dict) -> None:
    """The job strategy's generateSelector: the uid-based selector and the labels that match it."""
    meta = obj["metadata"]
    uid, name = meta.get("uid", ""), meta.get("name", "")
    template = spec.setdefault("template", {})
    if not isinstance(template, dict):
        return
    template_meta = template.setdefault("metadata", {})
    labels = template_meta.setdefault("labels", {})
    if isinstance(labels, dict):
        labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name, "controller-uid": uid, "job-name": name})
    if spec.get("selector") is None:
        spec["selector"] = _generated_selector(uid)


def _restart_policy(spec: dict, path: str) -> list[errors.FieldError]:
    policy = _dict(_dict(spec.get("template")).get("spec")).get("restartPolicy")
    return [] if policy in RESTART_POLICIES else [not_supported(path, policy, RESTART_POLICIES)]


class CronJobStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {}
        set_cronjob_defaults(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status":
            set_cronjob_defaults(new)
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = []
        schedule = spec.get("schedule")
        if isinstance(schedule, str) and not valid_schedule(schedule):
            problems.append(errors.FieldError("invalid", "spec.schedule", "unparseable cron expression", value=schedule))
        if spec.get("concurrencyPolicy") not in CONCURRENCY_POLICIES:
            problems.append(not_supported("spec.concurrencyPolicy", spec.get("concurrencyPolicy"), CONCURRENCY_POLICIES))
        job_spec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
        return problems + _restart_policy(job_spec, "spec.jobTemplate.spec.template.spec.restartPolicy")


def set_cronjob_defaults(obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec["concurrencyPolicy"] = spec.get("concurrencyPolicy") or "Allow"
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    set_template_defaults(_dict(_dict(spec.get("jobTemplate")).get("spec")).get("template"))


def valid_schedule(schedule: str) -> bool:
    """A standard cron expression (five fields, names and steps allowed; an optional TZ= prefix is
    kube's to refuse) or a descriptor (``@hourly``, ``@every 1h``)."""
    text = schedule.strip()
    if text.startswith("@"):
        return text in _DESCRIPTORS or bool(re.fullmatch(r"@every [0-9hms.]+", text))
    fields = text.split()
    return len(fields) == 5 and all(_CRON_FIELD.match(f) for f in fields)
