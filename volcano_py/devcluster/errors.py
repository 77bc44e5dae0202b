"""Errors of the dev cluster, shared by the launcher and its API helpers."""

from __future__ import annotations

import subprocess


class ClusterError(RuntimeError):
    """The control plane failed to start or to do what was asked; the message says which part and why."""


class KubectlError(subprocess.CalledProcessError):
    def __str__(self) -> str:
        return (
            f"kubectl {' '.join(self.cmd[1:])} failed with exit code {self.returncode}: {self.stderr.strip()}"
        )
