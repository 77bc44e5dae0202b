"""``vcctl nodeshard list/get``: each shard's counts, and per node the scheduler that owns it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.builders import make_nodeshard
from volcano_py.cli.vcctl import commands
from volcano_py.cli.vcctl import main as vcctl_main
from volcano_py.kube.client import ApiError

SHARDS = [
    make_nodeshard("volcano", ["n1", "n2", "n3"], in_use=["n1", "n2"], to_add=["n3"]),
    make_nodeshard("agent", ["n4"], in_use=["n3", "n4"]),
]


class _Shards:
    """An API holding ``SHARDS`` and nothing else."""

    async def get(self, path: str, **_params: Any) -> dict[str, Any]:
        if path == "/apis/shard.volcano.sh/v1alpha1/nodeshards":
            return {"items": SHARDS}
        for shard in SHARDS:
            if path.endswith(f"/nodeshards/{shard['metadata']['name']}"):
                return shard
        raise ApiError(404, "NotFound", f"{path} not found")

    async def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _api(monkeypatch: pytest.MonkeyPatch) -> None:
    async def client(_args: object) -> _Shards:
        return _Shards()

    monkeypatch.setattr(commands, "_client", client)


def test_list_shows_each_shards_counts_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert vcctl_main(["nodeshard", "list", "-k", "/nonexistent"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Name      Desired   InUse   ToAdd   ToRemove",
        "agent     1         2       0       0",
        "volcano   3         2       1       0",
    ]


def test_get_shows_the_owner_of_each_of_its_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    assert vcctl_main(["nodeshard", "get", "-N", "volcano", "-k", "/nonexistent"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Name      Desired   InUse   ToAdd   ToRemove",
        "volcano   3         2       1       0",
        "",
        "Node   Owner",
        "n1     volcano",
        "n2     volcano",
        "n3     agent (handing over to volcano)",
    ]


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        pytest.param(["-N", "ghost"], "Error: nodeshard ghost not found\n", id="unknown"),
        pytest.param([], "Error: --name: the name of the nodeshard must be specified; pass --name NAME\n",
                     id="no-name"),
    ],
)  # fmt: skip
def test_get_errors_name_what_is_wrong(argv: list[str], err: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert vcctl_main(["nodeshard", "get", *argv, "-k", "/nonexistent"]) == 1
    assert capsys.readouterr().err == err
