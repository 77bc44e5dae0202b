"""``volcano-py validate`` against a real API server on many generated manifests; JSON on stdout.

The long form of ``tests/integration/test_validate_differential.py``: a control plane of its own (our CRDs,
our webhooks served in-process), ``--cases`` cases of ``tests/differential/corpus.py`` (the plan cycled,
each object drawn anew). Prints cases run,
agreements, and disagreements by kind; ``--show N`` also prints the first N disagreements on stderr. Exits 1
on any disagreement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

from tests.differential import corpus
from tests.differential.judge import Tally, judge_all, open_default_queue
from tests.integration.admission_harness import serving_admission
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.log import configure

REPO = Path(__file__).resolve().parents[1]


async def _judge(cluster: DevCluster, cases: list[corpus.Case], namespace: str, run: str) -> Tally:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    try:
        return await judge_all(client, cases, namespace, run, parallel=16)
    finally:
        await client.close()


def main() -> int:
    # Logs to stderr (warnings only): stdout carries the JSON summary alone.
    configure("warning")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N disagreements on stderr")
    args = parser.parse_args()

    started = time.monotonic()
    cases = corpus.sample(args.cases, seed=args.seed)
    generated = time.monotonic()
    run = uuid.uuid4().hex[:6]
    with tempfile.TemporaryDirectory(prefix="validate-differential-") as tmp:
        cluster = DevCluster(Path(tmp) / "cluster", out=sys.stderr)
        cluster.start()
        try:
            cluster.apply_crds(REPO / "crds")
            namespace = cluster.create_namespace()
            with serving_admission(cluster, Path(tmp) / "certs", {corpus.LABEL_KEY: run}):
                open_default_queue(cluster)
                judging = time.monotonic()
                tally = asyncio.run(_judge(cluster, cases, namespace, run))
                judged = time.monotonic()
        finally:
            cluster.stop()
    for outcome in tally.disagreements[: args.show]:
        print(outcome.describe(), file=sys.stderr)
    for outcome in tally.mismatched_fields[: max(0, args.show - len(tally.disagreements))]:
        print(f"(fields differ) {outcome.describe()}", file=sys.stderr)
    by_mutation = Counter(outcome.case.label for outcome in tally.disagreements)
    print(
        json.dumps(
            {
                "cases": tally.cases,
                "seed": args.seed,
                "agreements": tally.agreements,
                "disagreements": len(tally.disagreements),
                "field_mismatches": tally.field_mismatches,
                "by_kind": tally.by_kind,
                "disagreements_by_case": dict(by_mutation.most_common()),
                "field_mismatches_by_case": dict(
                    Counter(outcome.case.label for outcome in tally.mismatched_fields).most_common()
                ),
                "generate_s": round(generated - started, 1),
                "judge_s": round(judged - judging, 1),
            },
            indent=2,
        )
    )
    return 1 if tally.disagreements or tally.mismatched_fields else 0


if __name__ == "__main__":
    sys.exit(main())
