"""The translated template as CloudFormation deploys it, for the tests of this directory."""

from __future__ import annotations

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
