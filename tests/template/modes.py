"""The template's deploy modes, and SAM's translation of it in each, as ``sam deploy`` has it done
(the ``samtranslator`` library: offline, no credentials).

A mode is a choice of the parameters that change resources or wiring. The ones with AllowedValues
are read from the template, so a value added there is a new mode here; the others have a value that
turns something on and one that leaves it off (:data:`OPEN_PARAMETERS`). :func:`deployable` adds what
a mode needs to deploy at all (a JWT issuer, a traces endpoint), as the template's Rules require.

Run as a script, ``python tests/template/modes.py DIR`` writes the translations checkov scans
(``make checkov``, mk/checkov.mk) into DIR, one JSON file per mode of :data:`SCANNED`.
"""

from __future__ import annotations

import copy
import itertools
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from a2a_serverless_dev.resources import load_template
from testkit.sam_template import translate

ENUMERATED = (
    "AuthMode",
    "ExecutionMode",
    "Tracing",
    "TracingTransactionSearch",
    "CardSigning",
    "PushSigning",
    "Dashboard",
    "Architecture",
    "ApiAccessLogs",
    "SnapStart",
)
"""The mode parameters with AllowedValues: each allowed value is a mode's."""

TOPIC = "arn:aws:sns:us-east-1:123456789012:a2a-alarms"
COLLECTOR = "arn:aws:lambda:us-east-1:184161586896:layer:opentelemetry-collector-arm64-0_12_0:1"
PUBLIC_URL = "https://agent.example.com/a2a"
OPEN_PARAMETERS: Mapping[str, tuple[str, str]] = {
    # 0: no adapter (the gateway buffered through mangum); not 0: the adapter's layer, streaming.
    "WebAdapterLayerVersion": ("0", "25"),
    "AlarmTopicArn": ("", TOPIC),
    "TracingCollectorLayerArn": ("", COLLECTOR),
    # Empty: the cards name API Gateway's URL; set: a custom domain's, everywhere the URL is told.
    "PublicUrl": ("", PUBLIC_URL),
}
"""The mode parameters without AllowedValues: off, and on with a value of the right form."""

SCANNED: Mapping[str, Mapping[str, str]] = {
    # The defaults: AWS_IAM, Queue, no tracing, streaming gateway.
    "default": {},
    # Everything that adds resources or permissions on: a resource's checks see each of them.
    "jwt-durable-all": {
        "AuthMode": "Jwt",
        "ExecutionMode": "Durable",
        "Tracing": "CloudWatch",
        "TracingTransactionSearch": "Create",
        "CardSigning": "true",
        "Dashboard": "true",
        "AlarmTopicArn": TOPIC,
        "ApiAccessLogs": "true",
        "SnapStart": "true",
    },
    "open-buffered": {"AuthMode": "Open", "WebAdapterLayerVersion": "0", "Tracing": "Otlp"},
}
"""The modes checkov scans: between them, every resource and property the template can deploy."""


def parameter_values(template: Mapping[str, Any] | None = None) -> dict[str, tuple[str, ...]]:
    """Each mode parameter's values: the template's AllowedValues, or :data:`OPEN_PARAMETERS`'."""
    parameters = (template or load_template())["Parameters"]
    values = {name: tuple(str(v) for v in parameters[name]["AllowedValues"]) for name in ENUMERATED}
    return {**values, **OPEN_PARAMETERS}


def covering_array(values: Mapping[str, Sequence[str]]) -> list[dict[str, str]]:
    """Modes in which every pair of values of two parameters appears at least once (so every value
    of every parameter does too): a pairwise covering array, built greedily and deterministically.
    Each new mode starts from the first pair not yet covered, then takes for each other parameter
    the value that covers most pairs not yet covered."""
    names = list(values)
    uncovered = {((a, x), (b, y)) for a, b in itertools.combinations(names, 2) for x in values[a] for y in values[b]}
    modes: list[dict[str, str]] = []
    while uncovered:
        (a, x), (b, y) = min(uncovered, key=lambda pair: (names.index(pair[0][0]), names.index(pair[1][0]), pair))
        mode = {a: x, b: y}
        for name in names:
            if name in mode:
                continue
            mode[name] = max(
                values[name],
                key=lambda v: sum(
                    (((o, mode[o]), (name, v)) if names.index(o) < names.index(name) else ((name, v), (o, mode[o])))
                    in uncovered
                    for o in mode
                ),
            )
        uncovered -= {((p, mode[p]), (q, mode[q])) for p, q in itertools.combinations(names, 2)}
        modes.append({name: mode[name] for name in names})
    return modes


def deployable(mode: Mapping[str, str]) -> dict[str, str]:
    """``mode`` with what it needs to deploy (the template's Rules): Jwt an issuer and an audience;
    Otlp without a collector layer, an endpoint."""
    completed = dict(mode)
    if completed.get("AuthMode") == "Jwt":
        completed.update(JwtIssuer="https://issuer.example.com", JwtAudience="a2a-clients")
    if completed.get("Tracing") == "Otlp" and not completed.get("TracingCollectorLayerArn"):
        completed["TracingEndpoint"] = "https://otel.example.com/v1/traces"
    return completed


def for_checkov(translated: Mapping[str, Any], parameters: Mapping[str, str]) -> dict[str, Any]:
    """``translated`` as checkov should see it in the mode of these ``parameters``. checkov decides a
    resource's Condition from the parameters' defaults: here the mode's values are the defaults.
    And each API's waivers (its ``Metadata.checkov.skip``, which SAM puts on the RestApi) are on its
    stage too: SAM makes the stage from the API's properties, and checkov checks its logging and
    caching there."""
    result = copy.deepcopy(dict(translated))
    for name, value in parameters.items():
        result["Parameters"][name]["Default"] = value
    resources = result["Resources"]
    for resource in resources.values():
        if resource["Type"] != "AWS::ApiGateway::Stage":
            continue
        api = resources[resource["Properties"]["RestApiId"]["Ref"]]
        skips = api.get("Metadata", {}).get("checkov", {}).get("skip", [])
        if skips:
            resource.setdefault("Metadata", {}).setdefault("checkov", {}).setdefault("skip", []).extend(skips)
    return result


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        usage = "usage: PYTHONPATH=tests python tests/template/modes.py DIR  (writes DIR/<mode>.json for checkov)"
        print(usage, file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.json"):
        stale.unlink()
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # this process's own entry point
    # SAM's translator warns, as it is collected, of usage metrics nobody publishes offline.
    logging.getLogger("samtranslator.metrics").setLevel(logging.ERROR)
    for name, mode in SCANNED.items():
        parameters = deployable(mode)
        translated = for_checkov(translate(parameters), parameters)
        (out / f"{name}.json").write_text(json.dumps(translated, indent=1), encoding="utf-8")
    print(f"{len(SCANNED)} translations in {out}: {', '.join(SCANNED)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
