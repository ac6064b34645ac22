"""Webhook URL validation at creation (SSRF guard), including names that resolve to private
addresses. The resolver is injected: these tests never touch real DNS."""

from __future__ import annotations

import pytest

from a2a_serverless.push.urls import WebhookURLError, resolve_host, validate_webhook_url


def resolver(table: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    return lambda host: table.get(host, [])


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        pytest.param("https://loopback.example/hook", ["127.0.0.1"], id="name-to-loopback"),
        pytest.param("https://internal.example/hook", ["10.1.2.3"], id="name-to-private-10"),
        pytest.param("https://home.example/hook", ["192.168.0.7"], id="name-to-private-192"),
        pytest.param("https://metadata.example/hook", ["169.254.169.254"], id="name-to-cloud-metadata"),
        pytest.param("https://v6.example/hook", ["fd00::1"], id="name-to-unique-local-v6"),
        pytest.param("https://mapped.example/hook", ["::ffff:127.0.0.1"], id="name-to-mapped-loopback"),
        pytest.param("https://multi.example/hook", ["93.184.216.34", "10.0.0.1"], id="one-private-among-public"),
        pytest.param("https://mcast.example/hook", ["224.0.0.1"], id="name-to-multicast"),
        pytest.param("https://cgnat.example/hook", ["100.64.0.1"], id="name-to-shared-address-space"),
        pytest.param("https://sixtofour.example/hook", ["2002:a00:1::1"], id="name-to-6to4-wrapped-private"),
    ],
)
def test_names_resolving_to_non_public_addresses_are_refused(url: str, addresses: list[str]) -> None:
    host = url.split("/")[2]
    with pytest.raises(WebhookURLError, match="private, loopback"):
        validate_webhook_url(url, resolve=resolver({host: addresses}))


def test_a_public_name_and_an_unresolvable_name_are_accepted() -> None:
    table = {"hooks.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]}
    assert validate_webhook_url("https://hooks.example/a2a", resolve=resolver(table))
    # not resolvable now: accepted here, checked again when a notification is sent
    assert validate_webhook_url("https://not-yet.example/a2a", resolve=resolver({}))


def test_development_mode_admits_private_targets_without_resolving() -> None:
    def explode(host: str) -> list[str]:
        raise AssertionError("no resolution in development mode")

    assert validate_webhook_url("http://127.0.0.1:9000/hook", allow_private=True, resolve=explode)


def test_the_default_resolver_answers_for_a_literal_and_tolerates_failure() -> None:
    assert resolve_host("127.0.0.1") == ["127.0.0.1"]
    assert resolve_host("no-such-host.invalid") == []
