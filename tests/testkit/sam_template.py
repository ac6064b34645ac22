"""template.yaml through SAM's translator offline, as CloudFormation runs its transforms: first the
part of AWS::LanguageExtensions (listed first in the template's Transform) that SAM depends on, then
SAM's. Shared by the template tests (``tests/template/modes.py``) and any test that reads the
translated template."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from samtranslator.translator.transform import transform

from a2a_serverless_dev.resources import load_template

__all__ = ["RESOLVED_BEFORE_SAM", "language_extensions", "translate"]


def translate(parameters: Mapping[str, str], template: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The template through SAM with these parameter values (over the defaults), as CloudFormation
    passes them. The caller sets the Region (``AWS_DEFAULT_REGION``), which SAM reads."""
    source = copy.deepcopy(dict(template or load_template()))
    for resource in source["Resources"].values():
        props = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):  # what `sam package` does: local paths -> S3
            if isinstance(props.get(key), str):
                props[key] = "s3://bucket/" + props[key].strip("/")
    defaults = {k: str(v["Default"]) for k, v in source.get("Parameters", {}).items() if "Default" in v}
    values = {**defaults, **parameters}
    source = language_extensions(source, values)
    result: dict[str, Any] = transform(source, values, _NoManagedPolicies())
    return result


RESOLVED_BEFORE_SAM = frozenset(
    {
        "AutoPublishAlias",
        "AutoPublishAliasAllProperties",
        "VersionDeletionPolicy",
        "SnapStart",
        "FunctionArn",
        "PublishLambdaVersion",
        "Layers",
    }
)
"""The properties whose ``Fn::If`` the AWS::LanguageExtensions transform must resolve before SAM's:
SAM takes only a string in AutoPublishAlias and VersionDeletionPolicy and a boolean in
PublishLambdaVersion, an authorizer's FunctionArn may name an alias only one branch has, and SAM
publishes a new version when a layer changes only for a function whose Layers is a list."""


def language_extensions(template: Mapping[str, Any], parameters: Mapping[str, str]) -> dict[str, Any]:
    """``template`` after the part of AWS::LanguageExtensions (listed first in its Transform) that SAM
    depends on: each ``Fn::If`` under a resource's property of :data:`RESOLVED_BEFORE_SAM` resolved for these
    parameter values, an ``AWS::NoValue`` branch removing the property. The transform resolves every
    intrinsic it can; the others are left here to CloudFormation, which gives them the same values."""
    conditions = template.get("Conditions", {})

    def holds(expression: Any) -> bool:
        ((function, args),) = expression.items()
        if function == "Condition":
            return holds(conditions[args])
        if function == "Fn::Not":
            return not holds(args[0])
        if function == "Fn::And":
            return all(holds(a) for a in args)
        if function == "Fn::Or":
            return any(holds(a) for a in args)
        if function == "Fn::Equals":
            left, right = (parameters[a["Ref"]] if isinstance(a, dict) else str(a) for a in args)
            return bool(left == right)
        raise ValueError(f"condition function {function} is not resolved before SAM here")

    def resolve(value: Any) -> Any:
        while isinstance(value, dict) and set(value) == {"Fn::If"}:
            name, then, otherwise = value["Fn::If"]
            value = then if holds(conditions[name]) else otherwise
        return value

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(v) for v in value]
        if not isinstance(value, dict):
            return value
        result = {}
        for key, item in value.items():
            chosen = resolve(item) if key in RESOLVED_BEFORE_SAM else item
            if chosen != {"Ref": "AWS::NoValue"}:
                result[key] = walk(chosen)
        return result

    # Resources only: the transform leaves SAM's Globals as they are (SAM CLI's run of it does).
    return {**template, "Resources": walk(template["Resources"])}


class _NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}
