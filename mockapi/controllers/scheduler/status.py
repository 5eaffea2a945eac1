"""A plugin's verdict: kube's ``framework.Status`` — a code, reasons, and the plugin that said it.

"Doesn't fit" is a value, never an exception. ``Unschedulable`` means another pod's leaving could
help (preemption may try); ``UnschedulableAndUnresolvable`` means nothing on that node could
(preemption skips the node). ``Wait`` is Permit's "not yet"; ``Skip`` tells the framework to skip
the plugin's later extension point for this pod (PreFilter → Filter, PreScore → Score) or, for
Bind, to ask the next binder.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Code(enum.Enum):
    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def rejected(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable (kube's ``IsRejected``)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def by(self, plugin: str) -> "Status":
        """This status, said by ``plugin`` (the framework stamps each plugin's status)."""
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)


SUCCESS = Status()


def unschedulable(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


def error(message: str, *, plugin: str = "") -> Status:
    return Status(Code.ERROR, (message,), plugin)


def wait(plugin: str = "") -> Status:
    return Status(Code.WAIT, (), plugin)


def skip(plugin: str = "") -> Status:
    return Status(Code.SKIP, (), plugin)
