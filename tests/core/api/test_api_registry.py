"""core/api/registry.py: specs are found by api key and by the internal request type they send; bad specs refused."""

from __future__ import annotations

import attrs
import pytest

import core.api  # noqa: F401 - registers every API family
from core.api import registry
from core.api.registry import ApiSpec, RequestContext


@attrs.frozen
class _Req:
    x: int


def _spec(key: int, **kw) -> ApiSpec:
    return ApiSpec(key, kw.pop("route", "some-actor"), lambda v, b, c: b, lambda v, r: r, lambda v, b, e: {}, **kw)


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_UNITS", {})


def test_api_versions_is_registered_by_importing_core_api():
    spec = registry.spec_for_key(18)
    assert spec is not None and spec.name == "ApiVersions" and spec.edge_handler == "api_versions"
    assert 18 in registry.registered_keys()


def test_lookup_by_key_and_by_type(clean_registry):
    spec = _spec(4, request_type=_Req, send_version=4, request_to_wire=lambda r: {"x": r.x},
                 response_from_wire=lambda v, b: b)
    registry.register(spec)
    assert registry.spec_for_key(4) is spec
    assert registry.spec_for_type(_Req) is spec
    assert registry.spec_for_key(5) is None and registry.spec_for_type(int) is None
    assert registry.registered_keys() == frozenset({4})
    assert spec.edge_handler is None and spec.name == "LeaderAndIsr"


def test_registering_the_same_spec_twice_is_harmless_but_a_second_spec_is_refused(clean_registry):
    spec = _spec(3)
    registry.register(spec)
    registry.register(spec)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(_spec(3, route="another"))


@pytest.mark.parametrize("kw, message", [
    ({"send_version": 4}, "an outbound spec needs request_type"),
    ({"request_type": _Req, "send_version": 4}, "an outbound spec needs"),
    ({"request_type": _Req, "send_version": 9, "request_to_wire": lambda r: {}, "response_from_wire": lambda v, b: b},
     "outside 0-4"),
])
def test_incomplete_outbound_specs_are_refused(clean_registry, kw, message):
    with pytest.raises(ValueError, match=message):
        registry.register(_spec(4, **kw))


def test_an_unknown_api_key_is_refused(clean_registry):
    with pytest.raises(ValueError, match="not one Kafka 2.6 knows"):
        registry.register(_spec(50))


def test_reply_expected_defaults_to_true_and_follows_the_spec():
    assert _spec(0).expects_reply(3, {"acks": 0})
    acks0 = _spec(0, reply_expected=lambda v, b: b["acks"] != 0)
    assert not acks0.expects_reply(3, {"acks": 0}) and acks0.expects_reply(3, {"acks": -1})


def test_edge_routes_and_context_defaults():
    assert _spec(19, route="edge:admin").edge_handler == "admin"
    ctx = RequestContext(3, 7, "c", "127.0.0.1", 2, "PLAINTEXT")
    assert (ctx.api_version, ctx.correlation_id, ctx.client_id, ctx.listener) == (3, 7, "c", "PLAINTEXT")
    assert RequestContext(3).listener == ""


@attrs.frozen
class _Codec:
    min_version: int = 0
    max_version: int = 0


def test_private_keys_need_a_body_codec_and_are_not_advertised(clean_registry):
    with pytest.raises(ValueError, match="body_codec"):
        registry.register(_spec(10000))
    with pytest.raises(ValueError, match="body_codec"):
        registry.register(_spec(3, body_codec=_Codec()))
    private = _spec(10000, body_codec=_Codec(), request_type=_Req, send_version=0, request_to_wire=lambda r: {},
                    response_from_wire=lambda v, b: b)
    registry.register(private)
    registry.register(_spec(3))
    assert registry.spec_for_key(10000) is private and private.name == "kactor-private-10000"
    assert registry.registered_keys() == frozenset({3})
    with pytest.raises(ValueError, match="outside 0-0"):
        registry.register(_spec(10001, body_codec=_Codec(), request_type=int, send_version=1,
                                request_to_wire=lambda r: {}, response_from_wire=lambda v, b: b))


def test_a_route_to_a_component_is_no_edge_handler_and_edge_routes_name_their_handler():
    assert _spec(1, route=registry.Route.CONTROLLER).edge_handler is None
    assert _spec(1, route="edge:admin").edge_handler == "admin"
    assert _spec(1, route="some-actor").edge_handler is None
