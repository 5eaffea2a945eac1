"""Plugin DereferenceConfigs: the objects the chosen classes and claim details refer to, read
whole for ``status.classConfigs`` (each class once) and ``status.claimConfigs`` (rule 11).

A missing object — or a kind the server does not serve — is ConfigNotFound; the claim then waits
for that object to be created.
"""

from __future__ import annotations

from mockapi import errors
from mockapi.client import Client, Kind
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.search import Solution

NAME = "DereferenceConfigs"


def config_wait(api_version: str, kind: str, namespace: str, name: str) -> tuple:
    """The queue's wait key for "this object was created"."""
    return ("config", api_version, kind, namespace, name)


async def dereference(client: Client, solution: Solution, namespace: str) -> tuple[list[dict], list[dict]] | kinds.Failure:
    class_refs, claim_refs, seen = [], [], set()
    for option in solution.options:
        if option.device_class.name not in seen:
            seen.add(option.device_class.name)
            class_refs += [(ref, f'DeviceClass "{option.device_class.name}"') for ref in option.device_class.configs]
        claim_refs += [((*ref[:2], namespace, ref[2]), f"{option.detail.path}.configs") for ref in option.detail.configs]
    class_configs = await _read_all(client, class_refs)
    if isinstance(class_configs, kinds.Failure):
        return class_configs
    claim_configs = await _read_all(client, claim_refs)
    if isinstance(claim_configs, kinds.Failure):
        return claim_configs
    return class_configs, claim_configs


async def _read_all(client: Client, refs: list) -> list[dict] | kinds.Failure:
    objects, done = [], set()
    for ref, referrer in refs:
        if ref in done:
            continue
        done.add(ref)
        found = await _read(client, ref, referrer)
        if isinstance(found, kinds.Failure):
            return found
        objects.append(found)
    return objects


async def _read(client: Client, ref: tuple[str, str, str, str], referrer: str) -> dict | kinds.Failure:
    api_version, kind, namespace, name = ref
    try:
        return await client.get(Kind(api_version, kind), namespace, name)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        where = f" in namespace {namespace}" if namespace else ""
        message = f'{kind} "{name}" ({api_version}){where}, referenced by {referrer}, not found: {exc.message}'
        return kinds.failure(kinds.CONFIG_NOT_FOUND, message, waits=frozenset({config_wait(*ref)}))
