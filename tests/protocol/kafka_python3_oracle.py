"""Run under kafka-python 3 (``PYTHONPATH=.venv-clients/kafka-python3``), never imported by pytest itself.

Reads ``[[api_key, version, "request"|"response", hex], ...]`` as JSON on stdin; for each message whose version lies
in kafka-python's own JSON schema (Kafka 4's ``validVersions``), decodes the bytes with kafka-python and encodes the
result again. Two more kinds of item exercise its framing: ``["request-frame", api_key, version, body_hex,
correlation_id, client_id]`` answers the whole request frame kafka-python writes for that body (size, header v1/v2,
body), and ``["response-frame", api_key, version, frame_hex]`` answers ``[correlation_id, body_hex]`` as it reads our
response frame. Writes ``{"versions": {key: [min, max]}, "results": [hex | "error: ..." | null, ...]}`` (null = not in
its schema).
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
    for item in json.load(sys.stdin):
        if item[0] == "request-frame":
            _, key, version, body, correlation_id, client_id = item
            request = classes[(key, "request")].decode(bytes.fromhex(body), version=version)
            request._header = None
            request.with_header(correlation_id=correlation_id, client_id=client_id)
            out.append(bytes(request.encode(header=True, framed=True)).hex())
            continue
        if item[0] == "response-frame":
            _, key, version, frame = item
            cls = classes[(key, "response")]
            response = cls.decode(bytes.fromhex(frame), version=version, header=True, framed=True)
            out.append([response.header.correlation_id, bytes(response.encode()).hex()])
            continue
        key, version, direction, data = item
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
