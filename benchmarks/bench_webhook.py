"""Admission over the real HTTPS webhook server: requests per second and latency at 100 concurrent clients;
prints one JSON object (progress on stderr).

The server (``AdmissionEndpoint`` with Kopf's admission engine and our Job handlers, on the controller's
event loop; ``webhooklib``) runs in a process of its own, the clients in this one, each with a kept-alive
TLS connection as the API server keeps them. Each client sends a Job's two reviews in turn, as the API server
does for a Job create: ``/mutate-job`` then ``/validate-job``. Reported: requests/s, p50/p99/max latency
(send to last byte), errors (any answer but a 200 AdmissionReview), the server's RSS after the run, and the
load average, since on a shared machine the rate is only as good as the CPU the server got.

Usage: python -m benchmarks.bench_webhook [--seconds 15] [--concurrency 100] [--event-loop uvloop]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import ssl
import statistics
import sys
import time
from itertools import count
from multiprocessing.connection import Connection
from typing import Any

import aiohttp

from benchmarks.webhooklib import WebhookThread, job_review
from volcano_py import log
from volcano_py.kube import eventloop

WEBHOOKS = ("mutate-job", "validate-job")


def _serve(event_loop: str, pipe: Connection) -> None:
    log.configure("warning")
    server = WebhookThread(event_loop=event_loop).start_serving()
    pipe.send((server.port, str(server.cert_dir / "ca.crt")))
    pipe.recv()  # until the benchmark is done
    server.stop()


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def _client(
    http: aiohttp.ClientSession, port: int, until: float, ids: count[int], latencies: list[float]
) -> int:
    errors = 0
    while True:  # one Job at least: the warm-up sends exactly one
        uid = f"uid-{next(ids)}"
        for webhook in WEBHOOKS:
            body = json.dumps(job_review(uid)).encode()
            began = time.perf_counter()
            try:
                async with http.post(
                    f"https://127.0.0.1:{port}/{webhook}",
                    data=body,
                    headers={"Content-Type": "application/json"},
                ) as response:
                    answer = await response.json()
                    ok = response.status == 200 and answer["response"]["uid"] == uid
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError):
                ok = False
            latencies.append(time.perf_counter() - began)
            errors += not ok
        if time.monotonic() >= until:
            return errors


async def _load(port: int, ca: str, seconds: float, concurrency: int) -> dict[str, Any]:
    tls = ssl.create_default_context(cafile=ca)
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=tls)
    latencies: list[float] = []
    ids = count()
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as http:
        # Warm up: every client's TLS connection made, and one Job admitted each, before the clock starts.
        await asyncio.gather(*(_client(http, port, time.monotonic(), ids, []) for _ in range(concurrency)))
        began = time.monotonic()
        until = began + seconds
        clients = [_client(http, port, until, ids, latencies) for _ in range(concurrency)]
        errors = sum(await asyncio.gather(*clients))
        elapsed = time.monotonic() - began
    ordered = sorted(latencies)

    def percentile(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {
        "requests": len(latencies),
        "errors": errors,
        "requests_per_second": round(len(latencies) / elapsed, 1),
        "latency_ms": {
            "p50": percentile(0.50),
            "p99": percentile(0.99),
            "max": round(ordered[-1] * 1000, 2),
            "mean": round(statistics.fmean(ordered) * 1000, 2),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--event-loop", choices=eventloop.EVENT_LOOPS, default=eventloop.DEFAULT_EVENT_LOOP)
    args = parser.parse_args()
    log.configure("warning")
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(args.event_loop, theirs))
    server.start()
    try:
        port, ca = ours.recv()
        print(
            f"server on :{port} ({args.event_loop}); {args.concurrency} clients for {args.seconds:g} s",
            file=sys.stderr,
        )
        load_before = [round(x, 2) for x in os.getloadavg()]
        results = asyncio.run(_load(port, ca, args.seconds, args.concurrency))
        assert server.pid is not None
        results["server_rss_mb"] = _rss_mb(server.pid)
    finally:
        ours.send("done")
        server.join(15)
    report = {
        "benchmark": "webhook",
        "concurrency": args.concurrency,
        "seconds": args.seconds,
        "event_loop": args.event_loop,
        "load_average": {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]},
        **results,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
