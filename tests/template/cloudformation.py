"""The translated template as CloudFormation deploys it, for the tests of this directory."""

from __future__ import annotations

import re
from typing import Any


class Deployed:
    """The translated template as CloudFormation deploys it with these parameter values: resources
    whose Condition holds, and ``Fn::If`` resolved (an ``AWS::NoValue`` branch removes its item)."""

    def __init__(self, translated: dict[str, Any], **chosen: str) -> None:
        defaults = {k: str(v["Default"]) for k, v in translated["Parameters"].items() if "Default" in v}
        self.parameters = {**defaults, **chosen}
        self.conditions: dict[str, Any] = translated.get("Conditions", {})
        self.resources = {
            k: self.resolve(v)
            for k, v in translated["Resources"].items()
            if "Condition" not in v or self.holds({"Condition": v["Condition"]})
        }

    def holds(self, expression: Any) -> bool:
        ((function, args),) = expression.items()
        if function == "Condition":
            return self.holds(self.conditions[args])
        if function == "Fn::Not":
            return not self.holds(args[0])
        if function == "Fn::And":
            return all(self.holds(a) for a in args)
        if function == "Fn::Or":
            return any(self.holds(a) for a in args)
        if function == "Fn::Equals":
            left, right = (self.parameters[a["Ref"]] if isinstance(a, dict) else str(a) for a in args)
            return bool(left == right)
        raise AssertionError(f"condition function {function} not understood here")

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in (self.resolve(v) for v in value) if v != {"Ref": "AWS::NoValue"}]
        if not isinstance(value, dict):
            return value
        if set(value) == {"Fn::If"}:
            name, then, otherwise = value["Fn::If"]
            return self.resolve(then if self.holds(self.conditions[name]) else otherwise)
        items = {k: self.resolve(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v != {"Ref": "AWS::NoValue"}}

    def functions(self) -> list[str]:
        return sorted(k for k, v in self.resources.items() if v["Type"] == "AWS::Lambda::Function")

    def role(self, function: str) -> str:
        role: str = self.resources[function]["Properties"]["Role"]["Fn::GetAtt"][0]
        return role


STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/a2a/51af3dc0-da77-11e4-872e-1234567db123"
PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "AWS::StackName": "a2a",
    "AWS::StackId": STACK_ID,
    "AWS::URLSuffix": "amazonaws.com",
}
"""The pseudo parameters of one stack, for :func:`evaluate`."""


def evaluate(value: Any, pseudo: dict[str, str] | None = None) -> str:
    """A string CloudFormation computes from pseudo parameters only (``Fn::Sub``, ``Fn::Select``,
    ``Fn::Split``, ``Fn::Join``, ``Ref``), as it would for the stack :data:`PSEUDO` describes."""
    names = PSEUDO if pseudo is None else pseudo
    if isinstance(value, str):
        return value
    ((function, args),) = value.items()
    if function == "Ref":
        return names[args]
    if function == "Fn::Select":
        index, items = args
        return evaluate(items, names).split("\x00")[int(index)]
    if function == "Fn::Split":
        separator, text = args
        return "\x00".join(evaluate(text, names).split(separator))
    if function == "Fn::Join":
        separator, items = args
        return separator.join(evaluate(item, names) for item in items)
    if function == "Fn::Sub":
        text, variables = (args, {}) if isinstance(args, str) else args
        known = {**names, **{k: evaluate(v, names) for k, v in variables.items()}}
        return re.sub(r"\$\{([^}]+)\}", lambda m: known[m.group(1)], text)
    raise AssertionError(f"{function} not understood here")
