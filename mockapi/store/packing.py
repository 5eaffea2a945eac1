"""How the store packs a record (docs/memory.md): its canonical bytes as an LZ4 block
(``lz4.block``, stateless and thread-safe) compressed against a dictionary, the bytes of another
stored object of its resource, or of its label set where the resource's is unlike it. Each packed
record (:class:`~mockapi.store.watch.Packed`) refers to its own dictionary, so a dictionary can be
replaced without touching the records packed against the old one.

Only the writer's path (the store, on the event loop) calls :meth:`Packer.pack`; readers only
decompress.
"""

from __future__ import annotations

from typing import Hashable

import lz4.block

from mockapi.store.watch import Packed, Stored, untrack

# Packing (docs/memory.md). Below PACK_MIN bytes an object stays plain: the packed record's header,
# its int resourceVersion and dictionary slot cost more than compression saves. A packed form must
# save PACK_MARGIN bytes and an eighth of the size, or the object stays plain too (incompressible
# content: not worth a decompress per read). The first object of a resource of DICTIONARY_MIN bytes
# or more is its dictionary; after POOR_STREAK writes in a row that packed to more than half their
# size, the object at hand becomes the next one.
PACK_MIN = 256
PACK_MARGIN = 64
DICTIONARY_MIN = 512
POOR_STREAK = 32
# Objects of one (namespace, labels) scope (pods of one ReplicaSet) are alike: after SCOPE_MISSES of
# them packed to more than an eighth of their size against the resource's dictionary, the next one
# becomes their scope's own (once per scope; at most _SCOPED_LIMIT scopes tracked, then anew).
SCOPE_MISSES = 4
_SCOPED_LIMIT = 1024
_compress = lz4.block.compress  # stateless: the dictionaries are plain bytes


class _Dictionary:
    """The bytes a resource's objects are compressed against, and how many writes in a row packed poorly."""

    __slots__ = ("raw", "poor")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.poor = 0


class _Scoped:
    """A scope's dictionary (None until it has one) and its objects' misses with the resource's.
    Holds the scope, so that its id (the key) is not reused while the entry lives."""

    __slots__ = ("scope", "raw", "misses")

    def __init__(self, scope: tuple) -> None:
        self.scope = scope
        self.raw: bytes | None = None
        self.misses = 0


class Packer:
    """The dictionaries of one store, and the rule that picks one for a record."""

    def __init__(self) -> None:
        self.dictionaries: dict[Hashable, _Dictionary] = {}
        self._scoped: dict[tuple, _Scoped] = {}  # (resource, id(scope)) -> its dictionary

    def forget(self, resource: Hashable) -> None:
        """The resource went away (its CRD was deleted): its dictionaries go too."""
        self.dictionaries.pop(resource, None)
        self._scoped = {key: entry for key, entry in self._scoped.items() if key[0] != resource}

    def pack(self, resource: Hashable, stored: Stored, rv: int) -> Stored:
        """What the store keeps of a plain record (of resourceVersion ``rv``: Stored.rv would search
        the bytes): its packed twin, or the record itself when the object is small or
        its packed form not smaller by PACK_MARGIN and an eighth."""
        raw = stored[0]
        size = len(raw)
        if size < PACK_MIN:
            return stored
        scoped = self._scoped.get((resource, id(stored[2])))
        if scoped is not None and scoped.raw is not None:
            dictionary = scoped.raw
            blob = _compress(raw, dict=dictionary)
        else:
            dictionary, blob = self._with_resource(resource, raw, size)
            if dictionary is None:
                return stored
            if len(blob) > size >> 3 and size >= DICTIONARY_MIN:
                dictionary, blob = self._missed(resource, stored[2], scoped, raw, dictionary, blob)
        if len(blob) + PACK_MARGIN + (size >> 3) > size:  # not worth a decompress per read
            return stored
        packed = tuple.__new__(Packed, (blob, stored[1], stored[2], stored[3], rv, dictionary))  # Packed.pack, inline
        untrack(packed)  # immutable values only, as Stored
        return packed

    def _with_resource(self, resource: Hashable, raw: bytes, size: int) -> tuple[bytes | None, bytes]:
        """``raw`` compressed against the resource's dictionary (the dictionary too; None: there is none yet)."""
        dictionary = self.dictionaries.get(resource)
        if dictionary is None:
            if size < DICTIONARY_MIN:
                return None, b""
            dictionary = self.dictionaries[resource] = _Dictionary(raw)
        blob = _compress(raw, dict=dictionary.raw)
        if len(blob) * 2 <= size:
            dictionary.poor = 0
        else:
            dictionary.poor += 1
            if dictionary.poor >= POOR_STREAK and size >= DICTIONARY_MIN:
                # the resource's objects no longer look like the dictionary: this one is the next
                dictionary = self.dictionaries[resource] = _Dictionary(raw)
                blob = _compress(raw, dict=raw)
        return dictionary.raw, blob

    def _missed(self, resource: Hashable, scope: tuple, scoped: _Scoped | None, raw: bytes, dictionary: bytes, blob: bytes) -> tuple[bytes, bytes]:
        """An object of ``scope`` that the resource's dictionary packed to more than an eighth: the
        scope's SCOPE_MISSES-th becomes its dictionary (what to pack it against, and its blob)."""
        if scoped is None:
            if len(self._scoped) >= _SCOPED_LIMIT:
                self._scoped.clear()
            scoped = self._scoped[(resource, id(scope))] = _Scoped(scope)
        scoped.misses += 1
        if scoped.misses < SCOPE_MISSES or dictionary is raw:
            return dictionary, blob
        scoped.raw = raw
        return raw, _compress(raw, dict=raw)
