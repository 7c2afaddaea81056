"""Kafka's APIs as this broker serves them: one module per API family, each registering its ``ApiSpec``
(core/api/registry.py) at import. Importing this package registers them all; add one line per new module.
"""

from core.api import api_versions  # noqa: F401
