"""The HTTP edge: a thin ASGI dispatcher for the Kubernetes API, FastAPI for the cold endpoints."""
