"""HTTP extenders against real HTTP(S) servers on free ports: kube's payloads and replies (filter,
prioritize, bind, nodeCacheCapable), managedResources, timeouts, ignorable, HTTPS with a
self-signed CA, errors in kube's words, and the attempt record."""

import asyncio
import base64

import pytest

from mockapi.clock import FakeClock
from mockapi.controllers.scheduler import config
from mockapi.controllers.scheduler.framework import CycleState, FitError, Framework, ScheduleResult, Snapshot
from tests.scheduler.builders import node, pod
from tests.scheduler.extender_server import ExtenderServer, make_ca, node_names, server_context
from tests.scheduler.fake_client import NODES, PODS
from tests.scheduler.test_controller import condition, run, until

DEVICE = "example.com/gpu"


def framework(*extenders: dict, binder=None, observe=None) -> Framework:
    cfg = config.parse({"apiVersion": config.API_VERSION, "kind": config.KIND, "extenders": list(extenders)})
    return Framework(cfg.profiles[0], binder=binder, on_extender_call=observe)


def schedule(fwk: Framework, snapshot: Snapshot, p: dict):
    async def main():
        state = CycleState()
        try:
            return await fwk.schedule_pod(state, p, snapshot), state.attempt
        finally:
            await fwk.aclose()

    return asyncio.run(main())


def three_nodes() -> Snapshot:
    return Snapshot([node("a"), node("b"), node("c")])


def keep_only(*keep: str, reason: str = "not enough foo", unresolvable: str = ""):
    def handler(body):
        names = node_names(body)
        failed = {n: reason for n in names if n not in keep and n != unresolvable}
        reply = {"FailedNodes": failed, "FailedAndUnresolvableNodes": {unresolvable: "never here"} if unresolvable else {}, "Error": ""}
        if body.get("NodeNames") is not None:
            reply["NodeNames"] = [n for n in names if n in keep]
        else:
            reply["Nodes"] = {"items": [i for i in body["Nodes"]["items"] if i["metadata"]["name"] in keep]}
        return reply

    return handler


# ------------------------------------------------------------------------------ filter
def test_filter_gets_the_pod_and_the_nodes_the_plugins_kept_and_its_failed_nodes_count_in_the_fit_error():
    snapshot = Snapshot([node("a"), node("b"), node("c", unschedulable=True)])
    with ExtenderServer({"filter": keep_only("b")}) as ext:
        result, attempt = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter"}), snapshot, pod("p"))
        with ExtenderServer({"filter": keep_only(unresolvable="b")}) as none_fit:
            failed, _ = schedule(framework({"urlPrefix": none_fit.url, "filterVerb": "filter"}), snapshot, pod("p"))
    assert isinstance(result, ScheduleResult) and result.node == "b"
    (verb, body), = ext.requests
    assert verb == "filter" and body["Pod"]["metadata"]["name"] == "p"
    assert [i["metadata"]["name"] for i in body["Nodes"]["items"]] == ["a", "b"] and body["NodeNames"] is None
    assert isinstance(failed, FitError) and "Extender" in failed.diagnosis.unschedulable_plugins
    assert failed.message().startswith("0/3 nodes are available: 1 never here, 1 node(s) were unschedulable, 1 not enough foo.")
    rows = {row["node"]: row for row in attempt.as_dict()["filter"]}
    assert rows["a"]["verdicts"][-1] == {"extender": ext.url, "code": "Unschedulable", "reasons": ["not enough foo"]}
    assert rows["b"]["feasible"] and rows["b"]["verdicts"][-1] == {"extender": ext.url, "code": "Success"}
    assert rows["c"]["verdicts"][-1] == {"plugin": "NodeUnschedulable", "code": "UnschedulableAndUnresolvable", "reasons": ["node(s) were unschedulable"]}


def test_node_cache_capable_extenders_get_and_return_node_names():
    with ExtenderServer({"filter": keep_only("a", "c")}) as ext:
        result, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}), three_nodes(), pod("p"))
    (_, body), = ext.requests
    assert body["NodeNames"] == ["a", "b", "c"] and body["Nodes"] is None
    assert result.node in ("a", "c") and result.feasible == 2


def test_reply_keys_match_in_any_case_as_gos_decoder_does():
    reply = {"nodenames": ["b"], "FAILEDNODES": {"a": "no", "c": "no"}, "error": ""}
    with ExtenderServer({"filter": lambda body: reply}) as ext:
        result, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}), three_nodes(), pod("p"))
    assert result.node == "b"


def test_several_extenders_filter_in_turn_on_what_the_previous_kept():
    with ExtenderServer({"filter": keep_only("a", "b")}) as first, ExtenderServer({"filter": keep_only("b")}) as second:
        result, _ = schedule(framework({"urlPrefix": first.url, "filterVerb": "filter"}, {"urlPrefix": second.url, "filterVerb": "filter", "nodeCacheCapable": True}), three_nodes(), pod("p"))
    assert result.node == "b" and node_names(second.requests[0][1]) == ["a", "b"]


def test_a_node_the_extender_was_not_sent_is_an_error_in_kubes_words():
    with ExtenderServer({"filter": lambda body: {"NodeNames": ["zzz"]}}) as ext:
        result, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}), three_nodes(), pod("p"))
    assert result.message() == f'extender "{ext.url}" claims a filtered node "zzz" which is not found in the input node list'


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("reply, message", [
    ({"Error": "the agent is out of coffee"}, "the agent is out of coffee"),
    ((500, {"Error": "ignored: the code speaks"}), "failed filter with extender at URL {url}/filter, code 500"),
    ((200, b"<html>oops</html>"), "invalid character '<' looking for beginning of value"),
    ({"FailedNodes": ["a"]}, "json: cannot unmarshal array into Go struct field ExtenderFilterResult.FailedNodes of type v1.FailedNodesMap"),
])  # fmt: skip
def test_an_extender_error_fails_the_cycle_with_its_message(reply, message):
    with ExtenderServer({"filter": lambda body: reply}) as ext:
        result, attempt = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter"}), three_nodes(), pod("p"))
    assert isinstance(result, FitError) and result.status is not None
    assert result.message() == message.format(url=ext.url)
    assert attempt.as_dict()["extenderCalls"][0]["outcome"] == ("error" if isinstance(reply, tuple) else "success")  # the HTTP call's


def test_a_refused_connection_names_the_url_as_go_does():
    result, attempt = schedule(framework({"urlPrefix": "http://127.0.0.1:9/x", "filterVerb": "filter"}), three_nodes(), pod("p"))
    assert result.message() == 'Post "http://127.0.0.1:9/x/filter": dial tcp 127.0.0.1:9: connect: connection refused'
    assert attempt.calls[0].outcome == "error"


def test_a_slow_extender_times_out_after_http_timeout_and_the_hook_hears_of_it():
    heard = []
    with ExtenderServer({"filter": keep_only("a")}, delay=0.5) as ext:
        fwk = framework({"urlPrefix": ext.url, "filterVerb": "filter", "httpTimeout": "100ms"}, observe=lambda *call: heard.append(call))
        result, attempt = schedule(fwk, three_nodes(), pod("p"))
    assert result.message() == f'Post "{ext.url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    (extender, verb, outcome, seconds), = heard
    assert (extender, verb, outcome) == (ext.url, "filter", "timeout") and 0.09 < seconds < 0.45


def test_an_ignorable_extender_that_fails_is_skipped():
    with ExtenderServer({"filter": lambda body: (503, {})}) as broken, ExtenderServer({"filter": keep_only("c")}) as good:
        fwk = framework({"urlPrefix": broken.url, "filterVerb": "filter", "ignorable": True}, {"urlPrefix": good.url, "filterVerb": "filter"})
        result, attempt = schedule(fwk, three_nodes(), pod("p"))
    assert result.node == "c"
    calls = attempt.as_dict()["extenderCalls"]
    assert [(c["extender"], c["outcome"], c.get("ignored", False)) for c in calls] == [(good.url, "success", False), (broken.url, "error", True)]  # ignorable ones go last


# ------------------------------------------------------------------------------ prioritize
def test_extender_scores_times_weight_times_ten_join_the_plugin_scores():
    scores = [{"Host": "a", "Score": 0}, {"Host": "b", "Score": 2}, {"Host": "c", "Score": 10}]
    snapshot = Snapshot([node("a"), node("b"), node("c")], [pod("busy", cpu="3", node_name="c")])
    with ExtenderServer({"prioritize": lambda body: scores}) as ext:
        result, attempt = schedule(framework({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 5}), snapshot, pod("p", cpu="1"))
    plain = Framework().schedule_one(CycleState(), pod("p", cpu="1"), snapshot)
    assert plain.node == "a" and result.node == "c"
    assert result.scores == {"a": plain.scores["a"], "b": plain.scores["b"] + 100, "c": plain.scores["c"] + 500}
    top = attempt.as_dict()["scores"][0]
    assert top["node"] == "c" and top["total"] == result.scores["c"]
    assert top["scores"][-1] == {"extender": ext.url, "score": 10, "weight": 5, "weighted": 500}
    assert sum(part["weighted"] for part in top["scores"]) == top["total"]


def test_a_failing_prioritizer_only_loses_its_scores():
    with ExtenderServer({"prioritize": lambda body: (500, [])}) as ext:
        result, attempt = schedule(framework({"urlPrefix": ext.url, "prioritizeVerb": "prioritize"}), three_nodes(), pod("p"))
    assert result.node == "a" and attempt.calls[0].outcome == "error"


def test_one_feasible_node_is_not_prioritized():
    with ExtenderServer({"filter": keep_only("b"), "prioritize": lambda body: []}) as ext:
        schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "prioritizeVerb": "prioritize"}), three_nodes(), pod("p"))
    assert ext.verbs() == ["filter"]


# ------------------------------------------------------------------------------ managed resources
def test_only_pods_requesting_or_limiting_a_managed_resource_go_to_the_extender():
    gpu_limit = pod("gpu", spec={"containers": [{"name": "c", "image": "x", "resources": {"limits": {DEVICE: "1"}}}]})
    gpu_init = pod("init", spec={"initContainers": [{"name": "i", "image": "x", "resources": {"requests": {DEVICE: "1"}}}], "containers": [{"name": "c", "image": "x"}]})
    nodes = Snapshot([node(n, extended={DEVICE: "4"}) for n in "abc"])
    with ExtenderServer({"filter": keep_only("c")}) as ext:
        cfg = {"urlPrefix": ext.url, "filterVerb": "filter", "managedResources": [{"name": DEVICE}]}
        plain, _ = schedule(framework(cfg), nodes, pod("plain"))
        limited, _ = schedule(framework(cfg), nodes, gpu_limit)
        init, _ = schedule(framework(cfg), nodes, gpu_init)
    assert (plain.node, limited.node, init.node) == ("a", "c", "c")
    assert [body["Pod"]["metadata"]["name"] for _, body in ext.requests] == ["gpu", "init"]


def test_resources_ignored_by_the_scheduler_are_left_to_the_extender():
    greedy = pod("greedy", requests={DEVICE: "8"})
    nodes = Snapshot([node("a", extended={DEVICE: "1"})])
    cfg = {"urlPrefix": "http://127.0.0.1:9/", "managedResources": [{"name": DEVICE, "ignoredByScheduler": True}]}
    assert framework(cfg).schedule_one(CycleState(), greedy, nodes).node == "a"
    assert isinstance(Framework().schedule_one(CycleState(), greedy, nodes), FitError)


# ------------------------------------------------------------------------------ bind
def test_a_binding_extender_binds_the_pods_it_manages_instead_of_the_default_binder():
    bound_by_default = []

    async def binder(p, node_name):
        bound_by_default.append((p["metadata"]["name"], node_name))

    async def main(ext):
        fwk = framework({"urlPrefix": ext.url, "bindVerb": "bind", "managedResources": [{"name": DEVICE}]}, binder=binder)
        snapshot = Snapshot([node("a", extended={DEVICE: "1"})])
        statuses = []
        for p in (pod("gpu", requests={DEVICE: "1"}), pod("plain")):
            state = CycleState()
            result, _ = await fwk.run_scheduling_cycle(state, p, snapshot)
            statuses.append(await fwk.bind(state, p, result.node, snapshot))
        await fwk.aclose()
        return statuses

    with ExtenderServer({"bind": lambda body: {"Error": ""}}) as ext:
        statuses = asyncio.run(main(ext))
    assert all(s.success for s in statuses)
    assert ext.requests == [("bind", {"PodName": "gpu", "PodNamespace": "default", "PodUID": "uid-gpu", "Node": "a"})]
    assert bound_by_default == [("plain", "a")]


def test_a_bind_error_is_the_pods_error_and_undoes_the_assumption():
    async def main(ext):
        fwk = framework({"urlPrefix": ext.url, "bindVerb": "bind"})
        snapshot, p, state = Snapshot([node("a")]), pod("p"), CycleState()
        result, _ = await fwk.run_scheduling_cycle(state, p, snapshot)
        status = await fwk.bind(state, p, result.node, snapshot)
        await fwk.aclose()
        return status, snapshot.pod_node, state.attempt.calls

    with ExtenderServer({"bind": lambda body: {"Error": "node a is on fire"}}) as ext:
        status, counted, calls = asyncio.run(main(ext))
    assert (status.code.value, status.message(), counted) == ("Error", "node a is on fire", {})
    assert [c.verb for c in calls] == ["bind"]


# ------------------------------------------------------------------------------ HTTPS
def test_https_with_a_self_signed_ca_given_as_a_file_or_as_data(tmp_path):
    paths = make_ca(tmp_path)
    other = make_ca(tmp_path, name="other-ca")
    ca_data = base64.b64encode(paths["ca"].read_bytes()).decode()
    with ExtenderServer({"filter": keep_only("b")}, tls=server_context(paths)) as ext:
        assert ext.url.startswith("https://")
        by_file, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "enableHTTPS": True, "tlsConfig": {"caFile": str(paths["ca"])}}), three_nodes(), pod("p"))
        by_data, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "enableHTTPS": True, "tlsConfig": {"caData": ca_data}}), three_nodes(), pod("p"))
        no_ca, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "enableHTTPS": True}), three_nodes(), pod("p"))  # kube: insecure
        wrong, _ = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter", "tlsConfig": {"caFile": str(other["ca"])}}), three_nodes(), pod("p"))
    assert (by_file.node, by_data.node, no_ca.node) == ("b", "b", "b")
    assert wrong.message().startswith(f'Post "{ext.url}/filter": tls: failed to verify certificate: x509: ')


# ------------------------------------------------------------------------------ sync callers
def test_the_synchronous_entry_refuses_a_pod_an_extender_must_see():
    fwk = framework({"urlPrefix": "http://127.0.0.1:9/", "filterVerb": "filter"})
    with pytest.raises(RuntimeError, match="await the framework's async methods"):
        fwk.schedule_one(CycleState(), pod("p"), three_nodes())


# ------------------------------------------------------------------------------ the controller
def two_schedulers(ext_url: str, **extender) -> config.Configuration:
    """Two documents, as two kube-schedulers would read them: a plain default-scheduler, and
    my-scheduler with the extender."""
    plain = {"apiVersion": config.API_VERSION, "kind": config.KIND, "profiles": [{"schedulerName": "default-scheduler"}]}
    mine = {"apiVersion": config.API_VERSION, "kind": config.KIND, "profiles": [{"schedulerName": "my-scheduler"}],
            "extenders": [{"urlPrefix": ext_url, "filterVerb": "filter", "prioritizeVerb": "prioritize", **extender}]}  # fmt: skip
    return config.parse_all([plain, mine])


def test_each_profile_calls_its_own_extenders_and_the_last_attempt_tells_what_happened():
    calls = []

    async def scenario(fake, scheduler):
        for name in "abc":
            fake.put(NODES, node(name))
        fake.put(PODS, pod("mine", spec={"schedulerName": "my-scheduler"}))
        fake.put(PODS, pod("theirs"))
        fake.put(PODS, pod("nobodys", spec={"schedulerName": "nobody"}))
        await until(lambda: len(fake.bindings) == 2 and len(fake.reasons("mine")) == 1)
        await asyncio.sleep(0.02)
        return sorted(fake.bindings), scheduler.last_attempt("default", "mine"), scheduler.last_attempt("default", "nobodys")

    with ExtenderServer({"filter": keep_only("b", "c"), "prioritize": lambda body: [{"Host": "c", "Score": 10}]}) as ext:
        bindings, attempt, nobodys = run(scenario, config=two_schedulers(ext.url), on_extender_call=lambda *call: calls.append(call[:3]))
    assert bindings == [("default/mine", "c"), ("default/theirs", "a")]
    assert [body["Pod"]["metadata"]["name"] for _, body in ext.requests] == ["mine", "mine"] and nobodys is None
    assert calls == [(ext.url, "filter", "success"), (ext.url, "prioritize", "success")]
    assert (attempt["outcome"], attempt["node"], attempt["schedulerName"], attempt["feasibleNodes"]) == ("Scheduled", "c", "my-scheduler", 2)
    assert attempt["message"] == "Successfully assigned default/mine to c" and attempt["time"].endswith("Z")
    assert [c["verb"] for c in attempt["extenderCalls"]] == ["filter", "prioritize"]
    assert {row["node"]: row["feasible"] for row in attempt["filter"]} == {"a": False, "b": True, "c": True}
    assert attempt["scores"][0]["node"] == "c" and attempt["scores"][0]["scores"][-1]["weighted"] == 100


def test_a_failing_extender_fails_the_pod_with_the_extender_named_in_the_condition_and_event():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        fake.put(NODES, node("b"))
        fake.put(PODS, pod("p", spec={"schedulerName": "my-scheduler"}))
        await until(lambda: condition(fake, "p") is not None)
        return condition(fake, "p"), fake.events[-1], scheduler.last_attempt("default", "p")

    with ExtenderServer({"filter": lambda body: (500, {})}) as ext:
        failed, event, attempt = run(scenario, config=two_schedulers(ext.url))
    message = f"failed filter with extender at URL {ext.url}/filter, code 500"
    assert (failed["reason"], failed["message"]) == ("SchedulerError", message)
    assert (event["reason"], event["message"], event["source"]["component"]) == ("FailedScheduling", message, "my-scheduler")
    assert (attempt["outcome"], attempt["message"]) == ("SchedulerError", message)
    assert attempt["filter"][0]["verdicts"][-1] == {"extender": ext.url, "code": "Error", "reasons": [message]}


def test_a_pod_the_extender_filtered_out_is_retried_on_any_cluster_event():
    keep = {"names": []}

    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        fake.put(PODS, pod("p", spec={"schedulerName": "my-scheduler"}))
        await until(lambda: condition(fake, "p") is not None)
        unschedulable = condition(fake, "p")["message"]
        keep["names"] = ["a"]
        scheduler.clock.advance(1)
        fake.put(PODS, pod("elsewhere", node_name="a"))  # an event no in-tree plugin of this pod cares about
        await until(lambda: ("default/p", "a") in fake.bindings)
        return unschedulable

    handlers = {"filter": lambda body: keep_only(*keep["names"], reason="the agent says no")(body), "prioritize": lambda body: []}
    with ExtenderServer(handlers) as ext:
        unschedulable = run(scenario, config=two_schedulers(ext.url), clock=FakeClock())
    assert unschedulable.startswith("0/1 nodes are available: 1 the agent says no.")


def test_an_ignorable_binder_that_fails_leaves_the_pod_to_the_default_binder():
    bound = []

    async def binder(p, node_name):
        bound.append(node_name)

    async def main(ext):
        fwk = framework({"urlPrefix": ext.url, "bindVerb": "bind", "ignorable": True}, binder=binder)
        snapshot, p, state = Snapshot([node("a")]), pod("p"), CycleState()
        result, _ = await fwk.run_scheduling_cycle(state, p, snapshot)
        status = await fwk.bind(state, p, result.node, snapshot)
        await fwk.aclose()
        return status, state.attempt.as_dict()["extenderCalls"]

    with ExtenderServer({"bind": lambda body: {"Error": "busy"}}) as ext:
        status, calls = asyncio.run(main(ext))
    assert status.success and bound == ["a"]
    assert [(c["verb"], c["outcome"], c.get("ignored")) for c in calls] == [("bind", "success", True)]


def test_a_nominated_node_is_taken_only_if_the_extenders_keep_it_too():
    nominated = pod("p")
    nominated["status"]["nominatedNodeName"] = "a"
    with ExtenderServer({"filter": keep_only("b")}) as ext:
        result, attempt = schedule(framework({"urlPrefix": ext.url, "filterVerb": "filter"}), three_nodes(), nominated)
    assert result.node == "b"
    assert [node_names(body) for _, body in ext.requests] == [["a"], ["a", "b", "c"]]
