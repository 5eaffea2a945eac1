"""The pod scheduler: kube-scheduler's framework over plain Pod and Node dicts.

- :mod:`.queue` — the scheduling queue (activeQ by priority, backoffQ, unschedulablePods requeued
  by the cluster events of :mod:`.events` that could help, and a periodic flush);
- :mod:`.framework` — extension points in kube's order, :class:`~.framework.FitError` with kube's
  message, the scheduling cycle and the asynchronous binding cycle; :mod:`.status`,
  :mod:`.nodeinfo`, :mod:`.plugin` and :mod:`.waiting` are its parts;
- :mod:`.plugins` — NodeName, NodeUnschedulable, NodeAffinity, TaintToleration, NodeResourcesFit,
  DefaultPreemption, Coscheduling, SchedulingGates, PrioritySort, DefaultBinder, and the hook for
  DeviceClaims (:mod:`.plugins.device_claims`);
- :mod:`.config` — ``KubeSchedulerConfiguration`` profiles and extenders;
- :mod:`.extenders` — kube's HTTP extender client (filter, prioritize, bind);
- :mod:`.attempts` — what each pod's last scheduling cycle found, for people to read.
"""
