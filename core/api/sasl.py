"""SaslHandshake (17, v0-1) and SaslAuthenticate (36, v0-2) on a listener without SASL: every kactor listener is
PLAINTEXT, so these reach KafkaApis, which answers ILLEGAL_SASL_STATE (``handleSaslHandshakeRequest`` with no
mechanisms, ``handleSaslAuthenticateRequest`` with "SaslAuthenticate request received after successful
authentication"); on a SASL listener Kafka's authenticator takes them before KafkaApis.
"""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import ApiKeys

AFTER_AUTHENTICATION = "SaslAuthenticate request received after successful authentication"


def handshake_error(version: int, body: Body, error: int) -> Body:
    return fit_response(ApiKeys.SASL_HANDSHAKE, version, {"error_code": error, "mechanisms": []})


def authenticate_error(version: int, body: Body, error: int) -> Body:
    message = AFTER_AUTHENTICATION if error == Errors.ILLEGAL_SASL_STATE else None
    return fit_response(ApiKeys.SASL_AUTHENTICATE, version, {"error_code": error, "error_message": message,
                                                     "auth_bytes": b"", "session_lifetime_ms": 0})


_ILLEGAL_STATE = answered_with(always(Errors.ILLEGAL_SASL_STATE))
register(ApiSpec(ApiKeys.SASL_HANDSHAKE, ROUTE, _ILLEGAL_STATE, no_response, handshake_error))
register(ApiSpec(ApiKeys.SASL_AUTHENTICATE, ROUTE, _ILLEGAL_STATE, no_response, authenticate_error))
