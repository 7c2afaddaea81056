"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31), v0-2, on a broker without an authorizer
(``authorizer.class.name`` empty, kactor's only setting): KafkaApis answers SECURITY_DISABLED, "No Authorizer is
configured on the broker" — DescribeAcls as a whole, CreateAcls for each creation, DeleteAcls for each filter."""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

DESCRIBE_ACLS = API_KEYS["DescribeAcls"]
CREATE_ACLS = API_KEYS["CreateAcls"]
DELETE_ACLS = API_KEYS["DeleteAcls"]
NO_AUTHORIZER = "No Authorizer is configured on the broker"


def _message(error: int) -> str | None:
    return NO_AUTHORIZER if error == Errors.SECURITY_DISABLED else None


def describe_error(version: int, body: Body, error: int) -> Body:
    return fit_response(DESCRIBE_ACLS, version, {"throttle_time_ms": 0, "error_code": error,
                                                 "error_message": _message(error), "resources": []})


def create_error(version: int, body: Body, error: int) -> Body:
    return fit_response(CREATE_ACLS, version, {"throttle_time_ms": 0, "results": [
        {"error_code": error, "error_message": _message(error)} for _ in body.get("creations") or []]})


def delete_error(version: int, body: Body, error: int) -> Body:
    return fit_response(DELETE_ACLS, version, {"throttle_time_ms": 0, "filter_results": [
        {"error_code": error, "error_message": _message(error), "matching_acls": []}
        for _ in body.get("filters") or []]})


_DISABLED = answered_with(always(Errors.SECURITY_DISABLED))
register(ApiSpec(DESCRIBE_ACLS, ROUTE, _DISABLED, no_response, describe_error))
register(ApiSpec(CREATE_ACLS, ROUTE, _DISABLED, no_response, create_error))
register(ApiSpec(DELETE_ACLS, ROUTE, _DISABLED, no_response, delete_error))
