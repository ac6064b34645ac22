"""Who is calling (``a2a_serverless.auth``), read from API Gateway's request context the way each kind of
authorizer writes it: a Cognito user pool authorizer (REST: ``authorizer.claims``), a JWT authorizer (HTTP
API: ``authorizer.jwt.claims``), a Lambda authorizer (``authorizer.principalId``: ours), and IAM (SigV4:
``identity.userArn``). A token's caller is its issuer and subject together, never ``anonymous``."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.datastructures import Headers

from a2a_serverless.auth import ANONYMOUS, Principal, authenticate, token_principal
from a2a_serverless.errors import UnauthenticatedError

POOL_A = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_PoolA"
POOL_B = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_PoolB"
ROLE_ARN = "arn:aws:sts::123456789012:assumed-role/caller-role/session-1"


def caller(request_context: dict[str, Any]) -> Principal:
    return authenticate("apigateway", {}, Headers(), {"requestContext": request_context})


def cognito(iss: str | None, sub: str) -> dict[str, Any]:
    claims = {"sub": sub, "token_use": "id"} | ({"iss": iss} if iss is not None else {})
    return {"authorizer": {"claims": claims}}


def http_api_jwt(iss: str, sub: str) -> dict[str, Any]:
    return {"authorizer": {"jwt": {"claims": {"iss": iss, "sub": sub}, "scopes": None}}}


def lambda_authorizer(principal_id: str) -> dict[str, Any]:
    return {"authorizer": {"principalId": principal_id, "integrationLatency": 3}}


def iam(user_arn: str | None, caller_id: str | None = "AROAEXAMPLE:session-1") -> dict[str, Any]:
    return {"identity": {"userArn": user_arn, "caller": caller_id, "sourceIp": "203.0.113.10"}}


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        pytest.param(cognito(POOL_A, "user-1"), f"{POOL_A}|user-1", id="cognito-claims"),
        pytest.param(http_api_jwt(POOL_A, "user-1"), f"{POOL_A}|user-1", id="http-api-jwt-claims"),
        pytest.param(lambda_authorizer(f"{POOL_A}|user-1"), f"{POOL_A}|user-1", id="our-lambda-authorizer"),
        pytest.param(iam(ROLE_ARN), ROLE_ARN, id="iam-user-arn"),
        pytest.param(iam(None, "AIDAEXAMPLEUSER"), "AIDAEXAMPLEUSER", id="iam-caller-without-arn"),
    ],
)
def test_each_authorizer_names_an_authenticated_caller(context: dict[str, Any], expected: str) -> None:
    assert caller(context) == Principal(expected, authenticated=True)


def test_the_same_subject_from_two_issuers_is_two_callers() -> None:
    # Given two issuers that each have a user "user-1"
    first, second = caller(cognito(POOL_A, "user-1")), caller(cognito(POOL_B, "user-1"))
    # Then they are two principals (a sub is unique only within its issuer)
    assert first.name != second.name
    assert (first.name, second.name) == (token_principal(POOL_A, "user-1"), token_principal(POOL_B, "user-1"))


@pytest.mark.parametrize(
    "context",
    [
        pytest.param(cognito(POOL_A, ANONYMOUS), id="cognito-claims"),
        pytest.param(http_api_jwt(POOL_A, ANONYMOUS), id="http-api-jwt-claims"),
        pytest.param(lambda_authorizer(token_principal(POOL_A, ANONYMOUS)), id="our-lambda-authorizer"),
    ],
)
def test_a_token_whose_subject_is_anonymous_is_not_the_open_mode_caller(context: dict[str, Any]) -> None:
    principal = caller(context)
    assert principal.authenticated
    assert principal.name != ANONYMOUS


def test_open_mode_and_no_credentials_are_the_unauthenticated_anonymous_caller() -> None:
    unauthenticated = Principal(ANONYMOUS, authenticated=False)
    assert caller(lambda_authorizer(ANONYMOUS)) == unauthenticated  # the authorizer in AuthMode Open
    assert caller(iam(None, None)) == unauthenticated
    assert caller({}) == unauthenticated


def test_claims_naming_no_issuer_are_refused_rather_than_keyed_by_subject_alone() -> None:
    with pytest.raises(UnauthenticatedError, match="issuer"):
        caller(cognito(None, "user-1"))


def test_claims_win_over_the_iam_identity_of_the_same_request() -> None:
    assert caller({**cognito(POOL_A, "user-1"), **iam(ROLE_ARN)}).name == f"{POOL_A}|user-1"
