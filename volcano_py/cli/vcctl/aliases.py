"""Volcano's one-verb tools, installed as console scripts: ``vsub``, ``vjobs``, ``vqueues``, ``vcancel``,
``vsuspend``, ``vresume``. Their flags are Volcano's, which differ from vcctl's: ``-N`` is the namespace and
``-n`` the name. Each runs the vcctl verb it stands for.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from volcano_py.cli.vcctl import _common, run
from volcano_py.cli.vcctl.commands import (
    Handler,
    job_delete,
    job_list,
    job_resume,
    job_run,
    job_suspend,
    job_view,
    queue_get,
    queue_list,
)


def _parser(prog: str, text: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=text)
    _common(parser)
    return parser


def _job_by_name(prog: str, text: str, handler: Handler, argv: Sequence[str] | None) -> int:
    parser = _parser(prog, text)
    parser.add_argument("-N", "--namespace", default="default", help="the namespace of job")
    parser.add_argument("-n", "--name", default="", help="the name of job")
    return run(handler, parser.parse_args(argv))


def vsub(argv: Sequence[str] | None = None) -> int:
    parser = _parser("vsub", "submit a job")
    parser.add_argument("-i", "--image", default="busybox", help="the container image of job")
    parser.add_argument("-N", "--namespace", default="default", help="the namespace of job")
    parser.add_argument("-n", "--name", default="", help="the name of job")
    parser.add_argument("-m", "--min", type=int, default=1, help="the minimal available tasks of job")
    parser.add_argument("-r", "--replicas", type=int, default=1, help="the total tasks of job")
    parser.add_argument(
        "-R", "--requests", default="cpu=1000m,memory=100Mi", help="the resource request of the task"
    )
    parser.add_argument(
        "-L", "--limits", default="cpu=1000m,memory=100Mi", help="the resource limit of the task"
    )
    parser.add_argument("-S", "--scheduler", default="volcano", help="the scheduler for this job")
    parser.add_argument("-q", "--queue", default="", help="the queue of the job")
    args = parser.parse_args(argv)
    args.filename = ""
    return run(job_run, args)


def vjobs(argv: Sequence[str] | None = None) -> int:
    parser = _parser("vjobs", "view job information")
    parser.add_argument("-N", "--namespace", default="default", help="the namespace of job")
    parser.add_argument("-n", "--name", default="", help="the name of job (all jobs when not given)")
    parser.add_argument("-S", "--scheduler", default="", help="list job with specified scheduler name")
    parser.add_argument("--all-namespaces", action="store_true", help="list jobs in all namespaces")
    parser.add_argument("--selector", default="", help="fuzzy matching jobName")
    args = parser.parse_args(argv)
    args.queue = ""
    return run(job_view if args.name else job_list, args)


def vqueues(argv: Sequence[str] | None = None) -> int:
    parser = _parser("vqueues", "view queue information")
    parser.add_argument("-n", "--name", default="", help="the name of queue (all queues when not given)")
    args = parser.parse_args(argv)
    return run(queue_get if args.name else queue_list, args)


def vcancel(argv: Sequence[str] | None = None) -> int:
    return _job_by_name("vcancel", "cancel a job", job_delete, argv)


def vsuspend(argv: Sequence[str] | None = None) -> int:
    return _job_by_name("vsuspend", "suspend a job", job_suspend, argv)


def vresume(argv: Sequence[str] | None = None) -> int:
    return _job_by_name("vresume", "resume a job", job_resume, argv)
