"""A plain stdlib HTTP client for looking at the servers' raw bytes (the SDKs hide them)."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Raw:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def request(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> Raw:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"content-type": "application/json", **(headers or {})}
        conn.request(method, parts.path or "/", body=data, headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
        return Raw(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
    finally:
        conn.close()


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> Raw:
    return request("POST", url, body, headers)


def get(url: str) -> Raw:
    return request("GET", url)
