"""Run under kafka-python 3 (``PYTHONPATH=.venv-clients/kafka-python3``), never imported by pytest itself.

Reads ``[[api_key, version, "request"|"response", hex], ...]`` as JSON on stdin; for each message whose version lies
in kafka-python's own JSON schema (Kafka 4's ``validVersions``), decodes the bytes with kafka-python and encodes the
result again. Writes ``{"versions": {key: [min, max]}, "results": [hex | "error: ..." | null, ...]}`` (null = not in its
schema).
"""

import importlib
import json
import sys


def message_classes():
    import kafka
    from kafka.protocol.api_message import ApiMessage

    assert kafka.__version__.startswith("3."), kafka.__file__
    for module in ("metadata", "admin", "consumer", "producer", "sasl"):
        importlib.import_module("kafka.protocol." + module)
    found = {}
    todo = list(ApiMessage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None):
            found[(cls._json["apiKey"], cls._json["type"])] = cls
    return found


def valid_range(cls):
    low, _, high = cls._json["validVersions"].partition("-")
    return int(low), int(high or low)


def main():
    classes = message_classes()
    out = []
    for key, version, direction, data in json.load(sys.stdin):
        cls = classes.get((key, direction))
        if cls is None or not valid_range(cls)[0] <= version <= valid_range(cls)[1]:
            out.append(None)
            continue
        try:
            value = cls.decode(bytes.fromhex(data), version=version)
            if not hasattr(value, "_header"):  # decode() leaves it unset; DeleteTopicsRequest.encode reads it
                value._header = None
            if version != value.API_VERSION:
                raise ValueError(f"decoded as v{value.API_VERSION}")
            out.append(bytes(value.encode()).hex())
        except Exception as e:  # reported per message, so the test names every one that fails
            out.append(f"error: {e!r}")
    versions = {k: valid_range(c) for (k, d), c in classes.items() if d == "request"}
    json.dump({"versions": versions, "results": out}, sys.stdout)


if __name__ == "__main__":
    main()
