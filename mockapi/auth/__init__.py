"""Who is asking and what they may do: authentication (:mod:`.authn`), the user a request runs as
(:mod:`.user`), authorization (:mod:`.authz`, RBAC in :mod:`.rbac`) and the audit log.

All of it is opt-in: a server with no authenticator configured treats every request as
``system:admin`` in ``system:masters`` and authorizes with AlwaysAllow, as today.
"""
