"""KubeSchedulerConfiguration: kube's default profile, plugin merging, pluginConfig, extenders,
and errors that name the field."""

import textwrap

import pytest

from mockapi.controllers.scheduler import config
from mockapi.controllers.scheduler.framework import Framework

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def load(tmp_path, body: str) -> config.Configuration:
    path = tmp_path / "scheduler.yaml"
    path.write_text(HEADER + textwrap.dedent(body))
    return config.load(path)


def refused(tmp_path, body: str) -> str:
    with pytest.raises(config.ConfigError) as caught:
        load(tmp_path, body)
    return str(caught.value)


def test_no_file_gives_kubes_default_profile():
    cfg = config.load(None)
    profile = cfg.profiles[0]
    assert profile.scheduler_name == "default-scheduler"
    assert profile.plugins["filter"] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit", "DeviceClaims"]
    assert profile.plugins["postFilter"] == ["DefaultPreemption", "Coscheduling"] and profile.plugins["bind"] == ["DefaultBinder"]
    assert profile.weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "DeviceClaims": 1}
    assert (cfg.pod_initial_backoff, cfg.pod_max_backoff, cfg.extenders) == (1.0, 10.0, [])


def test_a_real_looking_file_with_two_profiles_weights_and_plugin_config(tmp_path):
    cfg = load(tmp_path, """\
        leaderElection:
          leaderElect: false
        clientConnection:
          kubeconfig: /etc/kubernetes/scheduler.conf
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        profiles:
          - schedulerName: default-scheduler
          - schedulerName: bin-packing
            plugins:
              score:
                disabled:
                  - name: '*'
                enabled:
                  - name: NodeResourcesFit
                    weight: 5
              multiPoint:
                disabled:
                  - name: PodTopologySpread
            pluginConfig:
              - name: NodeResourcesFit
                args:
                  apiVersion: kubescheduler.config.k8s.io/v1
                  kind: NodeResourcesFitArgs
                  scoringStrategy:
                    type: MostAllocated
                    resources:
                      - name: cpu
                        weight: 1
                      - name: example.com/gpu
                        weight: 3
              - name: Coscheduling
                args:
                  permitWaitingTimeSeconds: 10
    """)
    packing = cfg.profile("bin-packing")
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "bin-packing"]
    assert (packing.plugins["score"], packing.weights) == (["NodeResourcesFit"], {"NodeResourcesFit": 5})
    assert packing.plugins["filter"] == cfg.profiles[0].plugins["filter"]
    assert packing.args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert (cfg.pod_initial_backoff, cfg.pod_max_backoff) == (2.0, 20.0)
    fwk = Framework(packing)
    assert fwk.plugins["NodeResourcesFit"].strategy == "MostAllocated" and fwk.plugins["Coscheduling"].args["permitWaitingTimeSeconds"] == 10


def test_disabling_one_plugin_at_one_point_and_enabling_it_back_in_place(tmp_path):
    cfg = load(tmp_path, """\
        profiles:
          - plugins:
              filter:
                disabled:
                  - name: NodeUnschedulable
              score:
                enabled:
                  - name: TaintToleration
                    weight: 7
    """)
    profile = cfg.profiles[0]
    assert "NodeUnschedulable" not in profile.plugins["filter"] and profile.plugins["filter"][0] == "NodeName"
    assert profile.plugins["score"][0] == "TaintToleration" and profile.weights["TaintToleration"] == 7


def test_star_disables_every_default_at_the_point(tmp_path):
    cfg = load(tmp_path, """\
        profiles:
          - plugins:
              filter:
                disabled: [{name: '*'}]
                enabled: [{name: NodeName}]
    """)
    assert cfg.profiles[0].plugins["filter"] == ["NodeName"]


def test_unknown_plugins_unimplemented_points_and_bad_args_name_their_fields(tmp_path):
    message = refused(tmp_path, """\
        profiles:
          - plugins:
              filter:
                enabled:
                  - name: NodeName
                  - name: Foo
              permit:
                enabled:
                  - name: NodeName
              score:
                enabled:
                  - name: ImageLocality
            pluginConfig:
              - name: NodeResourcesFit
                args:
                  scoringStrategy:
                    type: Balanced
                    resources:
                      - name: cpu
                        weight: 0
    """)
    assert str(tmp_path / "scheduler.yaml") in message
    assert 'profiles[0].plugins.filter.enabled[1].name: Invalid value: "Foo": plugin "Foo" does not exist' in message
    assert 'profiles[0].plugins.permit.enabled[0].name: Invalid value: "NodeName": plugin "NodeName" does not extend permit plugin' in message
    assert 'profiles[0].plugins.score.enabled[0].name: Invalid value: "ImageLocality": mockapi does not implement this in-tree plugin' in message
    assert 'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Balanced"' in message
    assert "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 0" in message


def test_profiles_need_unique_names_and_fields_must_be_known(tmp_path):
    message = refused(tmp_path, """\
        profiles:
          - schedulerName: a
          - schedulerName: a
            pluginsx: {}
    """)
    assert 'profiles[1].schedulerName: Duplicate value: "a"' in message
    assert 'profiles[1].pluginsx: unknown field "pluginsx"' in message


def test_wrong_api_version_is_refused():
    with pytest.raises(config.ConfigError, match=r'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3"'):
        config.parse({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"})


def test_extenders_are_parsed_and_kept(tmp_path):
    cfg = load(tmp_path, """\
        extenders:
          - urlPrefix: http://127.0.0.1:8888/scheduler
            filterVerb: filter
            prioritizeVerb: prioritize
            bindVerb: bind
            weight: 2
            httpTimeout: 1m30s
            nodeCacheCapable: true
            ignorable: true
            managedResources:
              - name: example.com/foo
                ignoredByScheduler: true
          - urlPrefix: http://other/
            filterVerb: filter
    """)
    first, second = cfg.extenders
    assert (first.url_prefix, first.filter_verb, first.prioritize_verb, first.bind_verb, first.weight) == ("http://127.0.0.1:8888/scheduler", "filter", "prioritize", "bind", 2)
    assert (first.http_timeout, first.node_cache_capable, first.ignorable) == (90.0, True, True)
    assert first.managed_resources == [config.ManagedResource("example.com/foo", True)]
    assert (second.http_timeout, second.weight, second.bind_verb) == (5.0, 1, "")


def test_bad_extenders_are_refused_by_field(tmp_path):
    message = refused(tmp_path, """\
        extenders:
          - urlPrefix: http://a/
            bindVerb: bind
            weight: -1
            httpTimeout: soon
          - bindVerb: bind
            managedResources:
              - name: cpu
    """)
    assert "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it" in message
    assert 'extenders[0].httpTimeout: Invalid value: "soon"' in message
    assert "extenders[1].urlPrefix: Required value" in message
    assert 'extenders[1].managedResources[0].name: Invalid value: "cpu"' in message
    assert "found 2 extenders attempting to bind" in message


@pytest.mark.parametrize("text, seconds", [("30s", 30), ("1m30s", 90), ("500ms", 0.5), ("1.5h", 5400), ("0", 0), (7, 7), ("3", None), ("s", None)])
def test_go_durations(text, seconds):
    assert config.parse_duration(text) == seconds


def test_a_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(config.ConfigError, match="cannot read scheduler configuration .*nope.yaml: No such file or directory"):
        config.load(tmp_path / "nope.yaml")


def test_each_document_is_one_schedulers_configuration_and_its_profiles_get_its_extenders(tmp_path):
    cfg = load(tmp_path, """\
        profiles:
          - schedulerName: default-scheduler
        ---
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: my-scheduler
          - schedulerName: my-other-scheduler
        extenders:
          - urlPrefix: http://127.0.0.1:8888/scheduler
            filterVerb: filter
            managedResources:
              - name: example.com/foo
                ignoredByScheduler: true
    """)
    default, mine, other = cfg.profiles
    assert default.extenders == [] and [e.url_prefix for e in mine.extenders] == [e.url_prefix for e in other.extenders] == ["http://127.0.0.1:8888/scheduler"]
    assert mine.args["NodeResourcesFit"]["ignoredResources"] == ["example.com/foo"] and "NodeResourcesFit" not in default.args


def test_a_scheduler_name_in_two_documents_and_a_bad_second_document_are_refused(tmp_path):
    assert 'profiles[1].schedulerName: Duplicate value: "default-scheduler"' in refused(tmp_path, "---\n" + HEADER)
    assert "document 2: invalid KubeSchedulerConfiguration: kind: Unsupported value" in refused(tmp_path, "profiles: [{schedulerName: a}]\n---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: Nope\n")


def test_http_timeout_is_a_duration_string_and_tls_config_fields_are_checked(tmp_path):
    message = refused(tmp_path, """\
        extenders:
          - urlPrefix: https://a/
            httpTimeout: 5
            tlsConfig:
              insecure: true
              caData: "not base64!"
              clientCert: x
    """)
    assert 'extenders[0].httpTimeout: Invalid value: "5"' in message
    assert "extenders[0].tlsConfig.caData: Invalid value: must be base64-encoded PEM" in message
    assert 'extenders[0].tlsConfig.clientCert: unknown field "clientCert"' in message


def test_an_unusable_ca_file_is_refused_at_load_time(tmp_path):
    message = refused(tmp_path, """\
        extenders:
          - urlPrefix: https://a/
            enableHTTPS: true
            tlsConfig:
              caFile: /nonexistent/ca.crt
    """)
    assert "extenders[0].tlsConfig: Invalid value: No such file or directory" in message
