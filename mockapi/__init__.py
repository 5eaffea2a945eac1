"""mockapi: a small, real Kubernetes API server for the devmgmtproto.k8s.io prototype."""

__version__ = "0.1.0"
