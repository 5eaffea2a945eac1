"""My controller's ClusterRole lets it do its job, and nothing more (docs/auth.md)."""

from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

ROLE = Path(__file__).parent / "controller-rbac.yaml"
POD = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


@pytest.mark.mockapi(load=ROLE)
def test_the_pod_watcher_may_read_pods_and_write_their_status_only(mockapi_rbac):
    with mockapi_rbac.api_client() as admin:
        client.CoreV1Api(admin).create_namespaced_pod("default", POD)  # the admin sets the scene
    with mockapi_rbac.service_account_client("ops", "pod-watcher") as api:
        pods = client.CoreV1Api(api)
        assert [p.metadata.name for p in pods.list_namespaced_pod("default").items] == ["web"]  # its job
        pods.patch_namespaced_pod_status("web", "default", {"status": {"message": "seen"}})
        with pytest.raises(ApiException) as refused:
            pods.delete_namespaced_pod("web", "default")  # nothing more
        assert refused.value.status == 403
