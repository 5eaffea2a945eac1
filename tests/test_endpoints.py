"""The cold endpoints: health checks worded like kube-apiserver's."""

from __future__ import annotations

import asyncio

import orjson

from mockapi import errors
from mockapi.http import responses
from mockapi.http.endpoints import health_report


def test_the_verbose_health_report_lists_every_check_then_the_verdict():
    assert health_report("readyz") == "[+]ping ok\n[+]store ok\nreadyz check passed\n"


def test_excluded_checks_are_marked_and_unknown_ones_are_warned_about():
    report = health_report("livez", excluded=["store", "etcd", "log"])
    assert report == (
        "[+]ping ok\n[+]store excluded: ok\n"
        'warn: some health checks cannot be excluded: no matches for "etcd","log"\n'
        "livez check passed\n"
    )


def test_an_error_renders_as_the_same_status_on_every_path():
    exc = errors.StatusError(429, "TooManyRequests", "slow down", {}, headers={"Retry-After": "1"})
    response = responses.error_response(exc)
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(responses.send_error(send, exc))
    assert response.status_code == sent[0]["status"] == 429
    assert response.body == sent[1]["body"]
    assert orjson.loads(response.body)["reason"] == "TooManyRequests"
    assert response.headers["retry-after"] == "1" and (b"retry-after", b"1") in sent[0]["headers"]


def test_an_unexpected_exception_renders_as_a_500_status():
    response = responses.error_response(RuntimeError("boom"))
    assert response.status_code == 500
    assert orjson.loads(response.body)["kind"] == "Status"
