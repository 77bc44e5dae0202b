"""The registry and argument parsing: unknown plugins and bad arguments fail with the entry named."""

from __future__ import annotations

import pytest
from plugin_builders import make_job

from volcano_py.api.job_defaults import with_default_plugins
from volcano_py.jobplugins import (
    JobPluginError,
    argument_problems,
    argument_warnings,
    build_plugins,
    plugin_problems,
)
from volcano_py.jobplugins.env import EnvPlugin
from volcano_py.jobplugins.mpi import MpiPlugin
from volcano_py.jobplugins.svc import SvcPlugin


def test_plugins_run_in_registry_order_whatever_the_job_lists() -> None:
    job = (
        make_job()
        .task("master", 1)
        .task("worker", 1)
        .plugin("hcclrank")
        .plugin("pytorch")
        .plugin("env")
        .obj()
    )
    assert build_plugins(job).names == ("env", "pytorch", "hcclrank")


def test_no_plugins_is_an_empty_set() -> None:
    job = make_job().task("w", 1).obj()
    del job["spec"]["plugins"]
    assert build_plugins(job).names == ()


def test_unknown_plugin_names_the_known_ones() -> None:
    job = make_job().task("w", 1).plugin("horovod").obj()
    with pytest.raises(JobPluginError) as err:
        build_plugins(job)
    assert str(err.value) == (
        "spec.plugins.horovod: unknown job plugin 'horovod'; "
        "known plugins are env, svc, ssh, mpi, pytorch, tensorflow, ray, hcclrank"
    )
    assert err.value.field == "spec.plugins.horovod"


@pytest.mark.parametrize(
    ("plugin", "args", "message"),
    [
        pytest.param(
            "mpi", ["--port=abc"], "spec.plugins.mpi[0]: --port takes an integer, not 'abc'", id="not-an-int"
        ),
        pytest.param(
            "svc",
            ["--disable-network-policy=yes"],
            "spec.plugins.svc[0]: --disable-network-policy takes true or false, not 'yes'",
            id="not-a-bool",
        ),
        pytest.param(
            "tensorflow",
            ["--port"],
            "spec.plugins.tensorflow[0]: --port needs a value: write '--port=<value>'",
            id="missing-value",
        ),
        pytest.param(
            "ray", ["--port=0"], "spec.plugins.ray: --port=0 is not a port; use 1-65535", id="port-zero"
        ),
    ],
)
def test_bad_arguments(plugin: str, args: list[str], message: str) -> None:
    job = make_job().task("head", 1).task("master", 1).plugin(plugin, *args).obj()
    with pytest.raises(JobPluginError) as err:
        build_plugins(job)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [
        pytest.param(
            "svc",
            ["--publish-not-ready-addresses", "--enable-networking", "--disable-network-policy"],
            SvcPlugin(publish_not_ready_addresses=True),
            id="svc-unknown-flag",
        ),
        pytest.param(
            "mpi", ["--port=2222", "worker", "--master=head"], MpiPlugin(port=2222), id="mpi-positional"
        ),
        pytest.param("env", ["--anything"], EnvPlugin(), id="env-takes-none"),
    ],
)
def test_arguments_from_the_first_one_volcano_cannot_read_have_no_effect(
    plugin: str, args: list[str], expected: object
) -> None:
    # Go's flag package stops at an unknown flag or a non-flag argument; Volcano's plugin runs on regardless.
    job = make_job().task("master", 1).task("head", 1).plugin(plugin, *args).obj()
    built = [p for p in build_plugins(job).plugins if p.name == plugin]
    assert built == [expected]
    assert argument_problems(job) == []
    (warning,) = argument_warnings(job)
    assert warning.startswith(f"spec.plugins.{plugin}[{1 if plugin != 'env' else 0}]: ")


def test_go_flag_spellings_are_accepted() -> None:
    job = make_job().task("m", 1).task("w", 1).plugin("mpi", "-master", "m", "--worker=w", "-port=0x16").obj()
    (mpi,) = build_plugins(job).plugins
    assert mpi == MpiPlugin(master="m", worker="w", port=22)


def test_plugins_must_be_a_map_of_string_lists() -> None:
    job = make_job().task("w", 1).obj()
    job["spec"]["plugins"] = {"svc": "--disable-network-policy"}
    with pytest.raises(JobPluginError) as err:
        build_plugins(job)
    assert str(err.value) == 'spec.plugins.svc: must be a list of strings, e.g. ["--port=23456"]'


def test_plugin_problems_reports_every_problem() -> None:
    job = make_job().task("w", 1).plugin("mpi").plugin("nope").plugin("svc", "--inject-hosts-env=no").obj()
    assert [str(p) for p in plugin_problems(job)] == [
        "spec.plugins.svc[0]: --inject-hosts-env takes true or false, not 'no'",
        "spec.plugins.nope: unknown job plugin 'nope'; known plugins are env, svc, ssh, mpi, pytorch, "
        "tensorflow, ray, hcclrank",
        "spec.tasks: the mpi plugin's master task 'master' was not found; add a task with that name or pass "
        "--master=<task name>",
    ]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param({"tensorflow": []}, {"tensorflow": [], "svc": []}, id="tensorflow"),
        pytest.param({"pytorch": ["--port=1"]}, {"pytorch": ["--port=1"], "svc": []}, id="pytorch"),
        pytest.param({"ray": []}, {"ray": [], "svc": []}, id="ray"),
        pytest.param({"mpi": []}, {"mpi": [], "svc": [], "ssh": []}, id="mpi"),
        pytest.param(
            {"mpi": [], "svc": ["--disable-network-policy"]},
            {"mpi": [], "svc": ["--disable-network-policy"], "ssh": []},
            id="keeps-user-svc-args",
        ),
        pytest.param({"env": []}, {"env": []}, id="env-alone"),
    ],
)
def test_default_plugins(given: dict[str, list[str]], expected: dict[str, list[str]]) -> None:
    assert with_default_plugins(given) == expected


def test_argument_problems_leave_names_and_mpi_master_to_the_api_rules() -> None:
    job = make_job().task("w", 1).plugin("mpi").plugin("nope").plugin("ray").plugin("svc", "--port=1").obj()
    assert [str(p) for p in argument_problems(job)] == [
        "spec.tasks: the ray plugin's head task 'head' was not found; add a task with that name or pass "
        "--head=<task name>",
    ]
