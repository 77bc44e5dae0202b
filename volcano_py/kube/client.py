"""A thin JSON client over kubernetes_asyncio's ApiClient: auth and TLS from it, bodies as plain dicts.

The generated typed APIs build a model object per item and convert it back for us; on a 10,000-pod list that
costs more than the request. We only borrow the ApiClient's configured session (kubeconfig or in-cluster
credentials, TLS, connection pool) and exchange raw JSON.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final
from urllib.parse import urlencode

import aiohttp
import orjson
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

from volcano_py.log import get_logger

_log = get_logger(__name__)

JSON = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
# What a request raises when no answer came (refused, reset, timed out), besides the ApiError of an answer.
NETWORK_ERRORS: Final = (aiohttp.ClientError, TimeoutError, ConnectionError)


class ApiError(Exception):
    """A non-2xx answer from the API server, with the Status object's reason and message when it sent one."""

    def __init__(self, status: int, reason: str, message: str, body: JSON | None = None) -> None:
        super().__init__(f"HTTP {status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def gone(self) -> bool:
        return self.status == 410


async def load_api_client(
    kubeconfig: str | None = None, *, context: str | None = None
) -> k8s_client.ApiClient:
    """An ApiClient from ``kubeconfig``, else in-cluster config, else ``$KUBECONFIG`` / ``~/.kube/config``."""
    configuration = k8s_client.Configuration()
    try:
        if kubeconfig:
            await k8s_config.load_kube_config(
                config_file=kubeconfig, context=context, client_configuration=configuration
            )
        else:
            try:
                k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            except k8s_config.ConfigException:
                await k8s_config.load_kube_config(context=context, client_configuration=configuration)
    except (k8s_config.ConfigException, OSError) as exc:
        where = kubeconfig or "in-cluster config, $KUBECONFIG or ~/.kube/config"
        raise ValueError(
            f"cannot load Kubernetes credentials from {where}: {exc}; "
            "pass --kubeconfig PATH to a valid kubeconfig"
        ) from None
    # Watches hold one connection each; binds and status writes share the rest.
    configuration.connection_pool_maxsize = 256
    api_client = k8s_client.ApiClient(configuration)
    # aiohttp closes a connection idle for 15 s; a burst of binds after a quiet spell then opened dozens
    # anew, each a TLS handshake on both sides (about 5% of the agent scheduler's CPU in a 5,000-node
    # churn). The API server keeps an idle connection 90 s, so ours are kept a little less than that.
    connector = api_client.rest_client.pool_manager.connector
    assert connector is not None  # the ApiClient made its session with a connector of its own
    connector._keepalive_timeout = KEEPALIVE_SECONDS
    if not any(os.environ.get(name) for name in _PROXY_VARIABLES):
        # Trusting the environment makes aiohttp re-read the proxy variables on every request (a few percent
        # of the scheduler's CPU); with none set there is nothing to find, so stop looking.
        api_client.rest_client.pool_manager._trust_env = False
    return api_client


# Below the API server's idle timeout for a connection (90 s), so it is never closed under a request.
KEEPALIVE_SECONDS: Final = 60.0
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _error_from(status: int, raw: bytes) -> ApiError:
    try:
        body = orjson.loads(raw)
    except ValueError:
        return ApiError(status, "", raw.decode("utf-8", "replace")[:500])
    if not isinstance(body, dict):
        return ApiError(status, "", str(body)[:500])
    return ApiError(status, str(body.get("reason", "")), str(body.get("message", "")), body)


JSON_ACCEPT: Final = "application/json"
# A list of objects' metadata only (PartialObjectMetadataList): what a list of a kind whose bodies the reader
# mostly does not need costs, in bytes sent and decoded. Items come as kind ``PartialObjectMetadata``.
METADATA_LIST_ACCEPT: Final = (
    f"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{JSON_ACCEPT}"
)
# The same for a watch: each event's object is its metadata only.
METADATA_ACCEPT: Final = f"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,{JSON_ACCEPT}"
PARTIAL_METADATA_KIND: Final = "PartialObjectMetadata"


def is_partial(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` came from a metadata-only read: its spec and status were never sent."""
    return obj.get("kind") == PARTIAL_METADATA_KIND


# client-go's default: a request the API server keeps shedding fails after this many retries.
MAX_RETRIES: Final = 10
# Longest wait honoured from a Retry-After header: a server in trouble can name any number.
_RETRY_AFTER_CAP: Final = 10.0


def _retry_after(status: int, header: str | None) -> float | None:
    """Seconds to wait before sending again, or None when this answer is final."""
    if status != 429 and status < 500:
        return None
    if header is None:
        return None  # client-go retries only when the server says when (a bare 5xx may have been processed)
    try:
        seconds = float(int(header.strip()))
    except ValueError:
        return None
    return min(max(seconds, 0.0), _RETRY_AFTER_CAP)


class KubeClient:
    """Raw JSON requests against the API server the ApiClient points at."""

    def __init__(self, api_client: k8s_client.ApiClient) -> None:
        self.api_client = api_client

    async def close(self) -> None:
        await self.api_client.close()

    @property
    def server(self) -> str:
        """The API server's URL."""
        return str(self.api_client.configuration.host)

    async def _send(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: JSON | list[JSON] | None = None,
        content_type: str = "application/json",
        request_timeout: float | aiohttp.ClientTimeout | None = 30.0,
        accept: str = JSON_ACCEPT,
    ) -> aiohttp.ClientResponse:
        # Straight to the ApiClient's aiohttp session: its generic call path walks and re-serializes every
        # body with the standard json module, which cost more of the scheduler's CPU per bind and per Event
        # than the request itself. Credentials are asked for per request, as that path does, so a token
        # refreshed by an exec plugin is still picked up.
        api = self.api_client
        configuration = api.configuration
        headers = {**api.default_headers, "Accept": accept, "Content-Type": content_type}
        if api.cookie:
            headers["Cookie"] = api.cookie
        for setting in (await configuration.auth_settings()).values():
            if setting["in"] == "header" and setting["value"]:
                headers[setting["key"]] = setting["value"]
        url = f"{configuration.host}{path}"
        if query:
            url += "?" + urlencode(list(query.items()))
        if isinstance(request_timeout, aiohttp.ClientTimeout):
            timeout = request_timeout
        else:
            timeout = aiohttp.ClientTimeout(total=request_timeout)
        rest = api.rest_client
        extra: dict[str, Any] = {}
        if rest.proxy:
            extra["proxy"] = rest.proxy
        if rest.proxy_headers:
            extra["proxy_headers"] = rest.proxy_headers
        if rest.server_hostname:
            extra["server_hostname"] = rest.server_hostname
        response: aiohttp.ClientResponse = await rest.pool_manager.request(
            method,
            url,
            data=None if body is None else orjson.dumps(body),
            headers=headers,
            timeout=timeout,
            **extra,
        )
        return response

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: JSON | list[JSON] | None = None,
        content_type: str = "application/json",
        request_timeout: float = 30.0,
        accept: str = JSON_ACCEPT,
    ) -> JSON:
        """Send one request; return the decoded JSON body, or raise :class:`ApiError`.

        An answer of 429 or 5xx that carries ``Retry-After`` is sent again after the wait it names, up to
        ``MAX_RETRIES`` times, as client-go does: the API server sheds load that way (priority and fairness,
        max-in-flight limits) before it processes the request, so sending it again is safe for any verb.
        """
        for attempt in range(MAX_RETRIES + 1):
            response = await self._send(
                method,
                path,
                query=query,
                body=body,
                content_type=content_type,
                request_timeout=request_timeout,
                accept=accept,
            )
            async with response:
                raw = await response.read()
                if 200 <= response.status < 300:
                    break
                wait = _retry_after(response.status, response.headers.get("Retry-After"))
                if wait is None or attempt == MAX_RETRIES:
                    raise _error_from(response.status, raw)
            _log.debug(
                "API server asked to retry", method=method, path=path, status=response.status, wait=wait
            )
            await asyncio.sleep(wait)
        # orjson: twice as fast as json on API objects, and every list and watch event is decoded here.
        decoded = orjson.loads(raw) if raw else {}
        return decoded if isinstance(decoded, dict) else {"items": decoded}

    async def get(self, path: str, *, accept: str = JSON_ACCEPT, **query: str | int) -> JSON:
        return await self.request("GET", path, query=query, accept=accept)

    async def create(self, path: str, body: JSON) -> JSON:
        return await self.request("POST", path, body=body)

    async def replace(self, path: str, body: JSON) -> JSON:
        return await self.request("PUT", path, body=body)

    async def patch(self, path: str, body: JSON | list[JSON], content_type: str = MERGE_PATCH) -> JSON:
        return await self.request("PATCH", path, body=body, content_type=content_type)

    async def delete(self, path: str, body: JSON | None = None) -> JSON:
        return await self.request("DELETE", path, body=body)

    async def stream(
        self,
        path: str,
        query: Mapping[str, str | int],
        *,
        read_timeout: float,
        connected: Callable[[], None] | None = None,
        accept: str = JSON_ACCEPT,
    ) -> AsyncIterator[JSON]:
        """Yield one decoded JSON object per line of a watch response; :class:`ApiError` on a non-2xx.
        ``connected`` is called once the server has answered, before its first line."""
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=read_timeout)
        response = await self._send("GET", path, query=query, request_timeout=timeout, accept=accept)
        async with response:
            if not 200 <= response.status < 300:
                raise _error_from(response.status, await response.read())
            if connected is not None:
                connected()
            async for line in response.content:
                if line.strip():
                    yield orjson.loads(line)
