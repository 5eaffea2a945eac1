"""``kubectl auth whoami``: ``POST /apis/authentication.k8s.io/v1/selfsubjectreviews`` answers with the
requester's user info and stores nothing (kube's SelfSubjectReview, a create-only virtual kind).

Served through :class:`mockapi.http.kube.KubeAPI`'s ``virtual`` hook, which is consulted only for a
resource no registered type serves: the hot path does not see it.
"""

from __future__ import annotations

import orjson

from mockapi import errors
from mockapi.auth.user import UNAUTHENTICATED_ADMIN
from mockapi.http import bodies, responses

GROUP = "authentication.k8s.io"
RESOURCE = "selfsubjectreviews"
VERSIONS = ("v1", "v1beta1", "v1alpha1")


async def self_subject_review(info, user, receive, send) -> None:
    """Answer a SelfSubjectReview for ``user`` (None: authentication is off, the admin)."""
    if info.version not in VERSIONS or info.name or info.namespace:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
    if info.verb != "create":
        raise errors.method_not_allowed()
    await bodies.read(receive, limit=1 << 20, declared_length=None)  # the request's body says nothing the answer needs
    review = {
        "kind": "SelfSubjectReview",
        "apiVersion": f"{GROUP}/{info.version}",
        "metadata": {"creationTimestamp": None},
        "status": {"userInfo": (user or UNAUTHENTICATED_ADMIN).to_json()},
    }
    await responses.send_bytes(send, 201, orjson.dumps(review))


HANDLERS = {(GROUP, RESOURCE): self_subject_review}
