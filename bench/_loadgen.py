"""The one load generator and SSE client ``compare.py`` points at every server.

Load: ``concurrency`` workers, each on its own keep-alive HTTP/1.1 connection, send requests until
``total`` have been sent; throughput is ``total`` over the wall time from the first request to the
last response. The client is a few lines over asyncio streams rather than httpx, so the client's own
CPU (it shares the machine with the server) stays small and equal for every server.

Streaming: a ``tick N SECONDS`` SendStreamingMessage over JSON-RPC; each artifact chunk carries its
emit time (``metadata.emittedAt``, the server's ``time.time()``), and its latency is arrival minus
that.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["HEADERS", "Request", "jsonrpc", "percentile", "run_load", "stream_latencies", "user_message"]

HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes = b""


def jsonrpc(method: str, params: dict[str, Any]) -> Request:
    return Request("POST", "/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode())


def user_message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    async def send(self, request: Request) -> tuple[int, bytes]:
        head = (
            f"{request.method} {request.path} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"A2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: {len(request.body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + request.body)
        status = int((await self.reader.readline()).split()[1])
        length, chunked = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
        if not chunked:
            return status, await self.reader.readexactly(length)
        body = b""
        while size := int((await self.reader.readline()).split(b";")[0], 16):
            body += (await self.reader.readexactly(size + 2))[:-2]
        await self.reader.readline()
        return status, body


async def run_load(
    host: str,
    port: int,
    make_request: Callable[[], Request],
    ok: Callable[[int, bytes], bool],
    *,
    concurrency: int,
    total: int,
) -> dict[str, Any]:
    """Send ``total`` requests from ``concurrency`` connections; requests/s, p50/p99 ms, errors."""
    connections = []
    for _ in range(concurrency):
        reader, writer = await asyncio.open_connection(host, port)
        connections.append(_Connection(reader, writer, f"{host}:{port}"))
    latencies: list[float] = []
    errors: list[str] = []
    remaining = total

    async def worker(connection: _Connection) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            request = make_request()
            start = time.perf_counter()
            status, body = await connection.send(request)
            latencies.append((time.perf_counter() - start) * 1000)
            if not ok(status, body):
                errors.append(f"{status} {body[:200]!r}")

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in connections))
    finally:
        wall = time.perf_counter() - started
        for connection in connections:
            connection.writer.close()
    return {
        "n": len(latencies),
        "rps": round(len(latencies) / wall, 1),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def stream_latencies(base_url: str, events: int, interval: float) -> dict[str, Any]:
    """One streamed ``tick`` task: per-chunk event-to-client latency, p50/p95/max ms."""
    request = jsonrpc("SendStreamingMessage", {"message": user_message(f"tick {events} {interval}")})
    latencies: list[float] = []
    data: list[str] = []
    with (
        httpx.Client(base_url=base_url, timeout=120) as client,
        client.stream("POST", "/", content=request.body, headers=HEADERS) as response,
    ):
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("data:"):
                data.append(line[5:].strip())
                continue
            if line or not data:
                continue
            now = time.time()
            event = json.loads("".join(data))
            data = []
            update = event.get("result", {}).get("artifactUpdate")
            if update:
                latencies.append((now - update["artifact"]["metadata"]["emittedAt"]) * 1000)
    if len(latencies) != events:
        raise RuntimeError(f"expected {events} artifact chunks, got {len(latencies)}")
    return {
        "n": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "max_ms": round(max(latencies), 1),
    }
