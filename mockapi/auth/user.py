"""The identity a request runs as (k8s.io/apiserver's ``user.Info``)."""

from __future__ import annotations

from dataclasses import dataclass, field

ANONYMOUS = "system:anonymous"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ALL_AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)

    def to_json(self) -> dict:
        """As authentication.k8s.io/v1 UserInfo (username, uid, groups, extra)."""
        out: dict = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


# Who a request is when no authentication is configured (everything allowed, as before auth existed).
UNAUTHENTICATED_ADMIN = UserInfo("system:admin", groups=(MASTERS, ALL_AUTHENTICATED))
