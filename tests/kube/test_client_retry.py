"""The client sends a request again when the API server sheds it (429 or 5xx with Retry-After), as client-go
does, and gives up with the server's own error otherwise. Served by a local aiohttp server that answers as
an overloaded API server does; the real one only does so under a load no test should create."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.client import MAX_RETRIES, ApiError, KubeClient

Answer = tuple[int, dict[str, str]]
Start = Callable[[list[Answer]], Awaitable[tuple[KubeClient, list[str]]]]
BINDING = "/api/v1/namespaces/default/pods/p/binding"


@pytest.fixture
async def serve() -> AsyncIterator[Start]:
    """Start a server that gives the listed (status, headers) answers in turn, then 201 Created; each
    start returns a client for it and the list of methods the server received."""
    runners: list[web.AppRunner] = []
    clients: list[KubeClient] = []

    async def start(answers: list[Answer]) -> tuple[KubeClient, list[str]]:
        seen: list[str] = []

        async def handle(request: web.Request) -> web.Response:
            seen.append(request.method)
            if answers:
                status, headers = answers.pop(0)
                body = {
                    "kind": "Status",
                    "code": status,
                    "reason": "TooManyRequests",
                    "message": "retry later",
                }
                return web.json_response(body, status=status, headers=headers)
            return web.json_response({"kind": "Status", "status": "Success"}, status=201)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration(host=f"http://127.0.0.1:{port}")))
        clients.append(client)
        return client, seen

    yield start
    for client in clients:
        await client.close()
    for runner in runners:
        await runner.cleanup()


async def test_a_shed_bind_is_sent_again_until_it_lands(serve: Start) -> None:
    client, seen = await serve([(429, {"Retry-After": "0"}), (503, {"Retry-After": "0"})])
    answer = await client.create(BINDING, {"target": {"name": "n1"}})
    assert answer["status"] == "Success"
    assert seen == ["POST", "POST", "POST"]


async def test_a_429_without_retry_after_is_the_callers_error(serve: Start) -> None:
    client, seen = await serve([(429, {})])
    with pytest.raises(ApiError) as caught:
        await client.create(BINDING, {"target": {"name": "n1"}})
    assert caught.value.status == 429 and caught.value.reason == "TooManyRequests"
    assert seen == ["POST"]


async def test_a_plain_server_error_is_not_sent_again(serve: Start) -> None:
    # Without Retry-After a 500 may have been processed (the pod may be bound): the caller decides.
    client, seen = await serve([(500, {})])
    with pytest.raises(ApiError) as caught:
        await client.create(BINDING, {"target": {"name": "n1"}})
    assert caught.value.status == 500
    assert seen == ["POST"]


async def test_a_server_that_keeps_shedding_fails_after_the_retries(serve: Start) -> None:
    client, seen = await serve([(429, {"Retry-After": "0"})] * (MAX_RETRIES + 5))
    with pytest.raises(ApiError) as caught:
        await client.create(BINDING, {"target": {"name": "n1"}})
    assert caught.value.status == 429
    assert len(seen) == MAX_RETRIES + 1


async def test_a_conflict_is_final(serve: Start) -> None:
    client, seen = await serve([(409, {"Retry-After": "0"})])
    with pytest.raises(ApiError) as caught:
        await client.create(BINDING, {"target": {"name": "n1"}})
    assert caught.value.conflict
    assert seen == ["POST"]
