"""Lambda entry point for the JSON-RPC binding: POST / serves every A2A method."""

from a2a_serverless.lambda_ import http_handler

handler = http_handler(None, jsonrpc=True, name="JsonRpc")
