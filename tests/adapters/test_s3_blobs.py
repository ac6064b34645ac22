"""What a client's browser gets from a stored part's presigned URL, fetched over HTTP from moto's
server (as the local stack runs it): always an attachment, under the part's own name or one made
for it; with its own media type only when that type is passive (an allowlist), else as opaque
bytes, so a page an agent stores never renders on the bucket's origin. The part the A2A client
sees keeps the media type it was produced with, and the stored object carries the same safe
metadata as the URL."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest

from a2a_serverless.adapters import S3BlobStore
from a2a_serverless.blobs import PartOffloader, PartPresenter, blob_key
from a2a_serverless.models import Message, Part, Role
from a2a_serverless.ports import Scope
from a2a_serverless_dev._moto import moto_server
from testkit.aws import fake_credentials

ALICE = Scope("acme", "alice")
THRESHOLD = 1024
PAGE = b"<html><script>fetch('/moto-api/data.json')</script></html>" + b" " * THRESHOLD

_buckets = itertools.count()


@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    with fake_credentials(), moto_server() as endpoint:
        yield boto3.client("s3", endpoint_url=endpoint)


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"parts-{next(_buckets)}"
    s3.create_bucket(Bucket=name)
    return name


def presented(s3: Any, bucket: str, part: Part) -> Part:
    """``part`` stored by the offloader and presented past the budget: the URL part a client gets."""
    blobs = S3BlobStore(bucket, client=s3)
    message = Message(message_id="m1", role=Role.ROLE_AGENT, parts=[part], task_id="t1", context_id="c1")
    stored = PartOffloader(blobs, THRESHOLD).offload_one(message, ALICE, "t1")
    (shown,) = PartPresenter(blobs, 900).present(stored, ALICE, "t1", 0).parts
    assert shown.url is not None
    assert shown.url.startswith("http"), shown
    return shown


def fetched(part: Part) -> httpx.Response:
    assert part.url is not None
    response = httpx.get(part.url, timeout=10)
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize(
    "media_type",
    [
        pytest.param("text/html", id="html"),
        pytest.param("TEXT/HTML; charset=utf-8", id="html-upper-charset"),
        pytest.param(" text/html ", id="html-spaced"),
        pytest.param("application/xhtml+xml", id="xhtml"),
        pytest.param("image/svg+xml", id="svg"),
        pytest.param("text/xml", id="text-xml"),
        pytest.param("application/xml", id="xml"),
        pytest.param("application/javascript", id="javascript"),
        pytest.param("text/javascript", id="text-javascript"),
        pytest.param("application/x-never-heard-of", id="unknown"),
        pytest.param("text/plain;", id="malformed-parameters"),
    ],
)
def test_an_active_part_without_a_name_is_a_download_of_opaque_bytes(s3: Any, bucket: str, media_type: str) -> None:
    # Given an agent's page stored as a part with no file name
    part = presented(s3, bucket, Part(raw=PAGE, media_type=media_type))

    # When a browser follows its URL
    response = fetched(part)

    # Then it gets the bytes as a download of opaque data, never a page to render
    assert response.content == PAGE
    assert response.headers["content-type"] == "application/octet-stream"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="part-'), disposition
    assert '.bin"' in disposition
    # and the A2A client still sees what the agent said the part is
    assert (part.media_type, part.filename) == (media_type, "")


@pytest.mark.parametrize(
    ("media_type", "served", "extension"),
    [
        pytest.param("image/png", "image/png", ".png", id="png"),
        pytest.param("application/pdf", "application/pdf", ".pdf", id="pdf"),
        pytest.param("Text/Plain; Charset=UTF-8", "text/plain; charset=utf-8", ".txt", id="text-charset"),
        pytest.param("application/json", "application/json", ".json", id="json"),
    ],
)
def test_a_passive_part_keeps_its_type_and_is_still_an_attachment(
    s3: Any, bucket: str, media_type: str, served: str, extension: str
) -> None:
    part = presented(s3, bucket, Part(raw=PAGE, media_type=media_type))

    response = fetched(part)

    assert response.headers["content-type"] == served
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="part-'), disposition
    assert f'{extension}"' in disposition


def test_a_text_part_without_a_type_is_served_as_utf8_text(s3: Any, bucket: str) -> None:
    text = "é" * THRESHOLD
    part = presented(s3, bucket, Part(text=text))

    response = fetched(part)

    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["content-disposition"].startswith("attachment;")
    assert response.content.decode("utf-8") == text


@pytest.mark.parametrize(
    ("filename", "ascii_name", "exact"),
    [
        pytest.param("report.html", "report.html", "report.html", id="ascii"),
        pytest.param("résumé 📄.html", "r_sum_ _.html", "r%C3%A9sum%C3%A9%20%F0%9F%93%84.html", id="non-ascii"),
        pytest.param('a"b\\c;d.html', "a_b_c;d.html", "a%22b%5Cc%3Bd.html", id="quotes-and-backslash"),
    ],
)
def test_a_named_part_is_an_attachment_under_its_name_encoded_per_rfc_6266(
    s3: Any, bucket: str, filename: str, ascii_name: str, exact: str
) -> None:
    part = presented(s3, bucket, Part(raw=PAGE, filename=filename, media_type="text/html"))

    response = fetched(part)

    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["content-disposition"] == f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{exact}"
    assert part.filename == filename


def test_what_a_part_cannot_hold_still_never_reaches_a_header(s3: Any, bucket: str) -> None:
    # Given an object, and a name and type a part refuses (control characters, a lone surrogate)
    # but the store is handed anyway
    blobs = S3BlobStore(bucket, client=s3)
    key = blob_key(ALICE, "t1", "e" * 64)
    blobs.put(key, PAGE, "text/plain\r\nContent-Type: text/html")

    # When it is signed and fetched
    url = blobs.url(
        key,
        filename="a\r\nb\ud800.html",
        media_type="text/plain\r\nContent-Type: text/html",
        expires_seconds=900,
    )
    assert url is not None
    response = httpx.get(url, timeout=10)

    # Then the type is opaque and the name is escaped, every character of it
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert (
        response.headers["content-disposition"]
        == "attachment; filename=\"a__b_.html\"; filename*=UTF-8''a%0D%0Ab%3F.html"
    )


def test_the_stored_object_carries_the_same_safe_metadata(s3: Any, bucket: str) -> None:
    # Given a page stored as a part
    blobs = S3BlobStore(bucket, client=s3)
    key = blob_key(ALICE, "t1", "d" * 64)

    # When it is put
    blobs.put(key, PAGE, "text/html")

    # Then S3 holds it as opaque bytes to be saved, whatever a GET without overrides would serve
    head = s3.head_object(Bucket=bucket, Key=key)
    assert (head["ContentType"], head["ContentDisposition"]) == ("application/octet-stream", "attachment")
