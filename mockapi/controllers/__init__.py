"""Controllers: level-triggered loops that talk to the API only through :mod:`mockapi.client`."""
