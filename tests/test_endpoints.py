"""The cold endpoints: health checks worded like kube-apiserver's."""

from __future__ import annotations

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
