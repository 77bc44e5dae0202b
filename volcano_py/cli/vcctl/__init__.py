"""``vcctl``: Volcano's command-line tool, same commands and flags, plus ``vcctl job why``.

``job run/list/view/suspend/resume/delete/why``, ``queue create/delete/operate/list/get``, ``jobflow`` and
``jobtemplate create/list/get/delete/describe``, ``cronjob list/get/suspend/resume``, ``pod list``,
``nodeshard list/get`` (ours: which scheduler owns which node) and ``version``; Volcano's one-verb tools
(``vsub``, ``vjobs``, ...) are in ``aliases``. Suspend and resume create ``bus.volcano.sh`` Commands
(AbortJob / ResumeJob) exactly as Volcano's vcctl does, so the controller, not the CLI, changes the Job.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from volcano_py.cli.vcctl.commands import HANDLERS, CommandError, Handler
from volcano_py.cli.vcctl.objects import UsageError


def _common(parser: argparse.ArgumentParser) -> None:
    default = os.environ.get("KUBECONFIG") or os.path.join(os.path.expanduser("~"), ".kube", "config")
    parser.add_argument("-k", "--kubeconfig", default=default, help="path to the kubeconfig file")
    parser.add_argument("-s", "--master", default="", help="the API server address")


CONF_HELP = (
    "the volcano-scheduler.conf for what-if and forecast sessions (default: the deployed ConfigMap "
    "volcano-system/volcano-scheduler-configmap, else the built-in default)"
)


def _forecast_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--forecast-seconds",
        type=float,
        default=5.0,
        help="time budget of the position-and-estimated-start forecast (0: skip it)",
    )


def _job_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    job = sub.add_parser("job", help="vcctl command line operation job").add_subparsers(
        dest="verb", required=True
    )

    run = job.add_parser("run", help="run job by parameters from the command line")
    _common(run)
    run.add_argument("-i", "--image", default="busybox", help="the container image of job")
    run.add_argument("-n", "--namespace", default="default", help="the namespace of job")
    run.add_argument("-N", "--name", default="", help="the name of job")
    run.add_argument("-m", "--min", type=int, default=1, help="the minimal available tasks of job")
    run.add_argument("-r", "--replicas", type=int, default=1, help="the total tasks of job")
    run.add_argument(
        "-R", "--requests", default="cpu=1000m,memory=100Mi", help="the resource request of the task"
    )
    run.add_argument(
        "-L", "--limits", default="cpu=1000m,memory=100Mi", help="the resource limit of the task"
    )
    run.add_argument("-S", "--scheduler", default="volcano", help="the scheduler for this job")
    run.add_argument("-q", "--queue", default="", help="the queue of the job")
    run.add_argument("-f", "--filename", default="", help="the yaml file of job")

    lst = job.add_parser("list", help="list job information")
    _common(lst)
    lst.add_argument("-n", "--namespace", default="default", help="the namespace of job")
    lst.add_argument("-S", "--scheduler", default="", help="list job with specified scheduler name")
    lst.add_argument("--all-namespaces", action="store_true", help="list jobs in all namespaces")
    lst.add_argument("--selector", default="", help="fuzzy matching jobName")
    lst.add_argument("-q", "--queue", default="", help="list jobs in this queue")

    for verb, text in (
        ("view", "show job information"),
        ("suspend", "abort a job"),
        ("resume", "resume a job"),
        ("delete", "delete a job"),
        ("why", "explain why a job is pending"),
    ):
        p = job.add_parser(verb, help=text)
        _common(p)
        p.add_argument("-n", "--namespace", default="default", help="the namespace of job")
        if verb == "why":
            p.add_argument("name", nargs="?", default="", help="the name of job")
            p.add_argument("-N", "--name", dest="name_flag", default="", help="the name of job")
            p.add_argument(
                "--scheduler-conf",
                default="",
                help=CONF_HELP,
            )
            p.add_argument(
                "--whatif-seconds",
                type=float,
                default=5.0,
                help="time budget of the what-would-make-it-run search (0: skip it)",
            )
            _forecast_flag(p)
        else:
            p.add_argument("-N", "--name", default="", help="the name of job")


def _queue_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    queue = sub.add_parser("queue", help="Queue Operations").add_subparsers(dest="verb", required=True)

    create = queue.add_parser("create", help="creates queue")
    _common(create)
    create.add_argument("-n", "--name", default="test", help="the name of queue")
    create.add_argument("-w", "--weight", type=int, default=1, help="the weight of the queue")
    create.add_argument("-S", "--state", default="Open", help="the state of queue")
    create.add_argument("-p", "--parent", default="", help="the parent queue (hierarchical queues)")

    delete = queue.add_parser("delete", help="delete queue")
    _common(delete)
    delete.add_argument("-n", "--name", default="", help="the name of queue")

    operate = queue.add_parser("operate", help="operate queue")
    _common(operate)
    operate.add_argument("-n", "--name", default="", help="the name of queue")
    operate.add_argument("-w", "--weight", type=int, default=0, help="the weight of the queue")
    operate.add_argument("-a", "--action", default="", help="operate action to queue: open, close or update")

    lst = queue.add_parser("list", help="lists all the queue")
    _common(lst)

    get = queue.add_parser("get", help="get a queue")
    _common(get)
    get.add_argument("-n", "--name", default="", help="the name of queue")
    get.add_argument("--scheduler-conf", default="", help=CONF_HELP)
    _forecast_flag(get)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vcctl", description="vcctl command line operation.")
    sub = parser.add_subparsers(dest="group", required=True)
    _job_parsers(sub)
    _queue_parsers(sub)
    flows.register(sub)
    shards.register(sub)
    version = sub.add_parser("version", help="print the version of vcctl")
    version.set_defaults(verb="version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers = {**HANDLERS, **flows.HANDLERS, **shards.HANDLERS}
    return run(handlers[(args.group, args.verb)], args)


def run(handler: Handler, args: argparse.Namespace) -> int:
    """Run one verb; a usage or API error is one line on stderr and exit status 1."""
    if getattr(args, "kubeconfig", None) and not os.path.exists(args.kubeconfig):
        args.kubeconfig = None
    try:
        return asyncio.run(handler(args))
    except (UsageError, CommandError) as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1


# Imported last: their parsers reuse _common above.
from volcano_py.cli.vcctl import flows, shards  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
