"""``volcano-py validate`` against a real API server on generated manifests of every kind we check.

Each case of ``tests/differential/corpus.py`` (a mostly-valid object, at most one targeted mutation) is judged
twice: offline, as ``volcano-py validate`` does, and by a dry-run create on the session's control plane, with
our CRDs and our admission webhooks serving it. The two must accept and refuse the same objects, and a refusal
the API server explains must name a field we name too. A case the API server is not the authority on (a check
only volcano-py makes) is marked in the corpus: we refuse it and the API server accepts it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from admission_harness import AdmissionServer, serving_admission

from tests.differential import corpus
from tests.differential.judge import judge_all, open_default_queue
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
SEED = 20260
# The plan twice: every mutation of every kind drawn on two objects, and about a quarter valid objects.
ROUNDS = 2


@pytest.fixture(scope="module")
def cases() -> list[corpus.Case]:
    # Drawn here, not at import: collecting the suite should not cost the seconds the drawing takes.
    return corpus.sample(ROUNDS * len(corpus.plan()), seed=SEED)


@pytest.fixture(scope="module")
def admission(cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdmissionServer]:
    with serving_admission(
        cluster, tmp_path_factory.mktemp("webhook-certs"), {corpus.LABEL_KEY: RUN}
    ) as server:
        yield server


@pytest.fixture(scope="module")
def differential_namespace(cluster: DevCluster) -> Iterator[str]:
    name = cluster.create_namespace()
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found", check=False)


def test_the_corpus_covers_every_kind_and_mutation_validate_checks(cases: list[corpus.Case]) -> None:
    assert {case.kind for case in cases} == {kind.kind for kind in corpus.KINDS}
    for kind in corpus.KINDS:
        expected = {m.name for m in kind.mutations} | {corpus.VALID}
        assert {case.mutation for case in cases if case.kind == kind.kind} == expected, kind.kind


async def test_validate_agrees_with_the_api_server(
    cluster: DevCluster, admission: AdmissionServer, differential_namespace: str, cases: list[corpus.Case]
) -> None:
    open_default_queue(cluster)
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    started = time.monotonic()
    try:
        tally = await judge_all(client, cases, differential_namespace, RUN)
    finally:
        await client.close()
    elapsed = time.monotonic() - started
    assert tally.cases == len(cases)
    report = [outcome.describe() for outcome in tally.disagreements]
    report += [f"(fields differ) {outcome.describe()}" for outcome in tally.mismatched_fields]
    assert not report, (
        f"{len(tally.disagreements)} disagreement(s) and {len(tally.mismatched_fields)} refusal(s) naming "
        f"other fields, of {tally.cases} cases in {elapsed:.0f}s:\n" + "\n".join(report)
    )
