"""Plain HTTPS calls to the apiserver as the admin: for polling, where a kubectl process per check is slow."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from volcano_py.devcluster.errors import ClusterError


class AdminApi:
    """The admin token and the apiserver's own serving certificate as the only trusted CA."""

    def __init__(self, server: str, token: str, ca_file: Path) -> None:
        self.server = server
        self._token = token
        self._ca_file = ca_file
        self._ssl: ssl.SSLContext | None = None

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=str(self._ca_file))
        return self._ssl

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One API call as the admin: (HTTP status, decoded JSON or text); status 0 if nothing answered."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.server + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, context=self._context(), timeout=10) as response:
                status, raw = int(response.status), response.read().decode()
        except urllib.error.HTTPError as err:
            status, raw = int(err.code), err.read().decode(errors="replace")
        except (urllib.error.URLError, OSError):
            return 0, None
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw

    def get(self, path: str) -> Any | None:
        """GET: the decoded body if the answer was 200, else None (404, not ready, no answer)."""
        status, body = self.request("GET", path)
        return body if status == 200 else None

    def get_json(self, path: str) -> Any:
        """GET an API path (e.g. ``/api/v1/nodes``) and decode it; ClusterError if that fails."""
        status, body = self.request("GET", path)
        if status != 200:
            raise ClusterError(f"GET {path} answered {status or 'nothing'}: {_message(body)}")
        return body

    def post_json(self, path: str, body: Any) -> Any:
        """POST an object (e.g. a Binding to ``.../pods/<name>/binding``); errors carry the API's reason."""
        status, answer = self.request("POST", path, body)
        if status not in (200, 201, 202):
            raise ClusterError(f"POST {path} answered {status or 'nothing'}: {_message(answer)}")
        return answer


def _message(body: Any) -> str:
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return str(body)[:300]


def http_ok(url: str) -> bool:
    """A plain-HTTP GET answered 200 (etcd's /health)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False
