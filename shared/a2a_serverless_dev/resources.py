"""Create the template's DynamoDB tables, SQS queues and S3 buckets on moto (or any endpoint) from
``template.yaml`` itself, so the local stack and the tests can never drift from what deploys.

Only the properties that shape behaviour are translated (keys, indexes, streams, FIFO, visibility,
redrive); account-level settings (encryption, PITR, tags, a bucket's public access block, policy and
lifecycle) have no local meaning and are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import yaml

from a2a_serverless.json_types import Json, JsonValue

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.literals import QueueAttributeNameType

__all__ = ["LocalResources", "create_resources", "load_template", "repo_template_path"]


def repo_template_path() -> Path:
    """The template the local stack runs: ``template.yaml`` in the current directory (an agent
    project's, or this repository's root), else the one at the root of the checkout this package
    lives in."""
    here = Path.cwd() / "template.yaml"
    return here if here.is_file() else Path(__file__).resolve().parents[2] / "template.yaml"


class _CfnLoader(yaml.SafeLoader):
    """YAML loader that understands CloudFormation short-form tags (``!Ref``, ``!GetAtt``...)."""


def _cfn_tag(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> JsonValue:
    name = "Ref" if tag_suffix == "Ref" else f"Fn::{tag_suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: JsonValue = loader.construct_scalar(node)
        if tag_suffix == "GetAtt" and isinstance(value, str):
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_template(path: Path | None = None) -> Json:
    text = (path or repo_template_path()).read_text(encoding="utf-8")
    data = yaml.load(text, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass
    if not isinstance(data, dict) or "Resources" not in data:
        raise ValueError("template has no Resources")
    return data


@dataclass
class LocalResources:
    """Physical names of what was created, by logical id."""

    tables: dict[str, str] = field(default_factory=dict)
    table_stream_arns: dict[str, str] = field(default_factory=dict)
    queue_urls: dict[str, str] = field(default_factory=dict)
    queue_arns: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, str] = field(default_factory=dict)


def create_resources(
    dynamodb: DynamoDBClient,
    sqs: SQSClient,
    *,
    s3: S3Client | None = None,
    prefix: str = "a2a-local",
    template: Json | None = None,
) -> LocalResources:
    """Create every ``AWS::DynamoDB::Table`` and ``AWS::SQS::Queue`` of the template with the given
    boto3 clients, and with an ``s3`` client every ``AWS::S3::Bucket`` (without one, none: the
    functions then get no bucket name). Queues are created dead-letter queues first so redrive
    targets resolve."""
    template = template or load_template()
    resources: Json = template["Resources"]
    out = LocalResources()
    for logical_id, res in resources.items():
        if res.get("Type") == "AWS::S3::Bucket" and s3 is not None:
            name = _bucket_name(prefix, logical_id)
            region = s3.meta.region_name
            if region == "us-east-1":  # the one region that takes no location constraint
                s3.create_bucket(Bucket=name)
            else:
                s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})  # type: ignore[typeddict-item]
            out.buckets[logical_id] = name
    for logical_id, res in resources.items():
        if res.get("Type") == "AWS::DynamoDB::Table":
            name = f"{prefix}-{logical_id}"
            desc = dynamodb.create_table(**_table_args(name, res.get("Properties", {})))
            out.tables[logical_id] = name
            arn = desc["TableDescription"].get("LatestStreamArn")
            if arn:
                out.table_stream_arns[logical_id] = arn
    queues = {k: v for k, v in resources.items() if v.get("Type") == "AWS::SQS::Queue"}
    pending = dict(queues)
    while pending:
        progressed = False
        for logical_id, res in list(pending.items()):
            props = res.get("Properties", {})
            target = _redrive_target(props)
            if target and target not in out.queue_arns:
                continue
            fifo = bool(props.get("FifoQueue"))
            name = f"{prefix}-{logical_id}" + (".fifo" if fifo else "")
            # The attribute names come from the template, which CloudFormation checks against the API.
            attributes = cast("dict[QueueAttributeNameType, str]", _queue_attributes(props, out))
            url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
            arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            out.queue_urls[logical_id] = url
            out.queue_arns[logical_id] = arn
            del pending[logical_id]
            progressed = True
        if not progressed:
            raise ValueError(f"unresolvable redrive targets among queues: {sorted(pending)}")
    return out


def _table_args(name: str, props: Json) -> Json:
    args: Json = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    if props.get("GlobalSecondaryIndexes"):
        args["GlobalSecondaryIndexes"] = [
            {"IndexName": g["IndexName"], "KeySchema": g["KeySchema"], "Projection": g["Projection"]}
            for g in props["GlobalSecondaryIndexes"]
        ]
    stream = props.get("StreamSpecification")
    if stream:
        args["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream["StreamViewType"]}
    return args


def _bucket_name(prefix: str, logical_id: str) -> str:
    """``<prefix>-<logicalid>`` as S3 takes it: lowercase letters, digits and hyphens, 63 at most."""
    name = re.sub(r"[^a-z0-9-]+", "-", f"{prefix}-{logical_id}".lower())[:63].strip("-")
    if len(name) < 3:
        raise ValueError(f"no S3 bucket name can be made of prefix {prefix!r} and {logical_id}")
    return name


def _redrive_target(props: Json) -> str | None:
    policy = props.get("RedrivePolicy")
    if not policy:
        return None
    target = policy["deadLetterTargetArn"]
    if isinstance(target, dict) and "Fn::GetAtt" in target:
        return str(target["Fn::GetAtt"][0])
    raise ValueError("RedrivePolicy.deadLetterTargetArn must be !GetAtt <Queue>.Arn")


def _queue_attributes(props: Json, created: LocalResources) -> dict[str, str]:
    attrs: dict[str, str] = {}
    if props.get("FifoQueue"):
        attrs["FifoQueue"] = "true"
        attrs["ContentBasedDeduplication"] = str(bool(props.get("ContentBasedDeduplication"))).lower()
    for key in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "ReceiveMessageWaitTimeSeconds"):
        if key in props:
            attrs[key] = str(props[key])
    target = _redrive_target(props)
    if target:
        attrs["RedrivePolicy"] = json.dumps(
            {
                "deadLetterTargetArn": created.queue_arns[target],
                "maxReceiveCount": props["RedrivePolicy"]["maxReceiveCount"],
            }
        )
    return attrs
