"""The bucket for large parts (``BlobsBucket``), on the template as CloudFormation receives it
(SAM-translated offline): private, encrypted, TLS only, expiring with the tasks; each function may
read or also write its objects as its part in the protocol needs, and every function is told its name."""

from __future__ import annotations

from typing import Any

import pytest

WRITERS = {
    "GatewayFunction",
    "SendMessageFunction",
    "WorkerFunction",
    "DurableWorkerFunction",
    "DeadLetterFunction",
    "SweeperFunction",
}
READERS = {"ListTasksFunction", "PushDeliveryFunction"}
# The push-config functions and the dispatcher read tasks' bookkeeping, never their parts.
NEITHER = {
    "AuthorizerFunction",
    "AgentCardFunction",
    "GetExtendedCardFunction",
    "CreatePushConfigFunction",
    "GetPushConfigFunction",
    "ListPushConfigsFunction",
    "DeletePushConfigFunction",
    "PushDispatcherFunction",
}
OBJECTS = {"Fn::Sub": "${BlobsBucket.Arn}/tasks/*"}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _resolve(value: Any, parameters: dict[str, str], conditions: dict[str, Any]) -> Any:
    """``value`` with ``Fn::If`` (and the conditions it names) evaluated for these parameter values;
    an ``AWS::NoValue`` branch removes its list item or key, as CloudFormation does."""
    if isinstance(value, list):
        resolved = [_resolve(v, parameters, conditions) for v in value]
        return [v for v in resolved if v != {"Ref": "AWS::NoValue"}]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Fn::If"}:
        name, then, otherwise = value["Fn::If"]
        chosen = then if _condition(conditions[name], parameters, conditions) else otherwise
        return _resolve(chosen, parameters, conditions)
    items = {k: _resolve(v, parameters, conditions) for k, v in value.items()}
    return {k: v for k, v in items.items() if v != {"Ref": "AWS::NoValue"}}


def _condition(expression: Any, parameters: dict[str, str], conditions: dict[str, Any]) -> bool:
    if isinstance(expression, dict) and set(expression) == {"Condition"}:
        return _condition(conditions[expression["Condition"]], parameters, conditions)
    ((function, args),) = expression.items()
    if function == "Fn::Not":
        return not _condition(args[0], parameters, conditions)
    if function == "Fn::Equals":
        left, right = (parameters[a["Ref"]] if isinstance(a, dict) else str(a) for a in args)
        return bool(left == right)
    raise AssertionError(f"condition function {function} not understood here")


def _bucket(translated: dict[str, Any]) -> dict[str, Any]:
    bucket: dict[str, Any] = translated["Resources"]["BlobsBucket"]
    assert bucket["Type"] == "AWS::S3::Bucket"
    return bucket


def _lifecycle_rules(translated: dict[str, Any], ttl_days: str) -> list[dict[str, Any]]:
    rules = _bucket(translated)["Properties"]["LifecycleConfiguration"]["Rules"]
    resolved: list[dict[str, Any]] = _resolve(rules, {"TaskTtlDays": ttl_days}, translated["Conditions"])
    return resolved


def _s3_statements(translated: dict[str, Any], function: str) -> list[dict[str, Any]]:
    """The statements of the function's role (inline and the template's managed policies) that name S3."""
    resources = translated["Resources"]
    role = resources[resources[function]["Properties"]["Role"]["Fn::GetAtt"][0]]["Properties"]
    documents = [p["PolicyDocument"] for p in role.get("Policies", [])]
    documents += [resources[a["Ref"]]["Properties"]["PolicyDocument"] for a in role["ManagedPolicyArns"] if "Ref" in a]
    statements = [s for d in documents for s in _as_list(d["Statement"])]
    return [s for s in statements if any(a.startswith("s3:") for a in _as_list(s["Action"]))]


def _functions(translated: dict[str, Any]) -> set[str]:
    return {k for k, v in translated["Resources"].items() if v["Type"] == "AWS::Lambda::Function"}


def test_the_bucket_is_encrypted_private_and_owner_enforced(translated: dict[str, Any]) -> None:
    props = _bucket(translated)["Properties"]
    (encryption,) = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption["ServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def test_the_bucket_is_kept_on_replacement_like_the_table(translated: dict[str, Any]) -> None:
    table = translated["Resources"]["TasksTable"]
    bucket = _bucket(translated)
    for policy in ("DeletionPolicy", "UpdateReplacePolicy"):
        assert bucket.get(policy) == table.get(policy), policy


def test_the_bucket_policy_denies_everything_without_tls(translated: dict[str, Any]) -> None:
    (policy,) = [r["Properties"] for r in translated["Resources"].values() if r["Type"] == "AWS::S3::BucketPolicy"]
    assert policy["Bucket"] == {"Ref": "BlobsBucket"}
    (statement,) = _as_list(policy["PolicyDocument"]["Statement"])
    assert statement["Effect"] == "Deny"
    assert statement["Principal"] == "*"
    assert _as_list(statement["Action"]) == ["s3:*"]
    assert _as_list(statement["Resource"]) == [
        {"Fn::GetAtt": ["BlobsBucket", "Arn"]},
        {"Fn::Sub": "${BlobsBucket.Arn}/*"},
    ]
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_objects_expire_after_the_tasks_ttl_parameter(translated: dict[str, Any]) -> None:
    # The parameter that sets the table's TTL sets the objects' expiration too
    env = translated["Resources"]["WorkerFunction"]["Properties"]["Environment"]["Variables"]
    assert env["A2A_TASK_TTL_DAYS"] == {"Ref": "TaskTtlDays"}
    parameter = translated["Parameters"]["TaskTtlDays"]
    assert (parameter["Type"], parameter["Default"], parameter["MinValue"]) == ("Number", 30, 0)

    # With a TTL: objects expire that many days after they were written
    expiring = [r for r in _lifecycle_rules(translated, "7") if "ExpirationInDays" in r]
    assert expiring == [{"Id": "ExpireWithTasks", "Status": "Enabled", "ExpirationInDays": {"Ref": "TaskTtlDays"}}]


@pytest.mark.parametrize("ttl_days", ["0", "30"])
def test_incomplete_uploads_are_aborted_and_nothing_expires_with_ttl_zero(
    translated: dict[str, Any], ttl_days: str
) -> None:
    rules = _lifecycle_rules(translated, ttl_days)
    assert any("ExpirationInDays" in r for r in rules) == (ttl_days != "0")
    (abort,) = [r for r in rules if "AbortIncompleteMultipartUpload" in r]
    assert abort["Status"] == "Enabled"
    assert abort["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}


def test_every_function_is_a_writer_a_reader_or_neither(translated: dict[str, Any]) -> None:
    assert _functions(translated) == WRITERS | READERS | NEITHER


@pytest.mark.parametrize("function", sorted(WRITERS | READERS | NEITHER))
def test_each_function_reads_or_writes_objects_as_its_part_needs(translated: dict[str, Any], function: str) -> None:
    statements = _s3_statements(translated, function)
    granted = {a for s in statements for a in _as_list(s["Action"])}
    if function in WRITERS:
        assert granted == {"s3:PutObject", "s3:GetObject"}
    elif function in READERS:
        assert granted == {"s3:GetObject"}  # never s3:PutObject
    else:
        assert granted == set()
    for statement in statements:
        assert statement["Effect"] == "Allow"
        assert _as_list(statement["Resource"]) == [OBJECTS], function


def test_every_function_is_told_the_bucket_name(translated: dict[str, Any]) -> None:
    for function in _functions(translated):
        env = translated["Resources"][function]["Properties"]["Environment"]["Variables"]
        assert env["A2A_BLOB_BUCKET"] == {"Ref": "BlobsBucket"}, function
    assert translated["Outputs"]["BlobsBucketName"]["Value"] == {"Ref": "BlobsBucket"}
