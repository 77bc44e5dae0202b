"""Objects are read through ``api/``: no raw ``metadata``/``spec``/``status`` outside ``api/`` and ``kube/``.

Issue 61 found 430 such reads spread over every package, each knowing the wire shape of a kind and what a
missing field means. Metadata is read through ``api/objects``, our kinds' bodies through ``api/bodies``; the
few raw reads left (a core kind on a path run per pod per cycle, an HTTP answer that is no Kubernetes object)
say why on their line, and there are at most ``MAX_RAW_READS`` of them. Counted per line, as
``grep -rnE`` counts them.
"""

from __future__ import annotations

import re
from pathlib import Path

import volcano_py

MAX_RAW_READS = 60
PACKAGE = Path(volcano_py.__file__).parent
# The two packages that know the wire form: the accessors themselves and the API client.
EXEMPT = frozenset({"api", "kube"})
# Either quote: ruff's formatter keeps strings double-quoted except inside f-strings, where a single-quoted
# key would otherwise slip past.
RAW_READ = re.compile(
    r"""\[\s*["'](metadata|spec|status)["']\s*\]|\.get\(\s*["'](metadata|spec|status)["']"""
)
REASON = re.compile(r"#\s*raw read:\s*\S")


def _modules() -> list[Path]:
    return [
        path for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] not in EXEMPT
    ]


def _raw_reads() -> list[tuple[str, str]]:
    """(``path:line``, the line) of each line with a raw read, outside ``api/`` and ``kube/``."""
    found = []
    for path in _modules():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if RAW_READ.search(line):
                found.append((f"{path.relative_to(PACKAGE.parent)}:{number}", line.strip()))
    return found


def _has_reason(line: str) -> bool:
    """A trailing ``# raw read: <reason>`` after the last raw read of the line."""
    last = [m.end() for m in RAW_READ.finditer(line)][-1]
    return REASON.search(line, last) is not None


def test_each_raw_read_says_why() -> None:
    unexplained = [f"{where}: {line}" for where, line in _raw_reads() if not _has_reason(line)]
    assert unexplained == [], (
        "read these through api/objects (metadata) or api/bodies (our kinds' spec and status); a core kind "
        "on a hot path may stay raw with a trailing '# raw read: <reason>':\n" + "\n".join(unexplained)
    )


def test_raw_reads_stay_few() -> None:
    reads = _raw_reads()
    assert len(reads) <= MAX_RAW_READS, f"{len(reads)} raw reads, at most {MAX_RAW_READS}:\n" + "\n".join(
        f"{w}: {line}" for w, line in reads
    )


def test_the_check_sees_the_whole_package() -> None:
    # A wrong root or exemption would pass with nothing to check.
    modules = _modules()
    assert len(modules) > 250
    for known in (
        "__main__.py",
        "scheduler/runtime/cache.py",
        "controllers/job/worker.py",
        "dashboard/views.py",
    ):
        assert PACKAGE / known in modules, known
    assert not any(path.relative_to(PACKAGE).parts[0] in EXEMPT for path in modules)
    # The pattern finds the reads where they are allowed, so a miss elsewhere is no blind spot.
    accessors = (PACKAGE / "api" / "objects.py").read_text(encoding="utf-8")
    assert RAW_READ.search(accessors)


def test_the_pattern_and_the_reason() -> None:
    for raw in ('pod["spec"]', 'pod[ "status" ]', 'job.get( "status", {})', 'x.get("metadata")'):
        assert RAW_READ.search(raw), raw
    for read in ("spec_of(pod)", 'status.get("phase")', 'pod.get("specs")', 'meta["name"]'):
        assert not RAW_READ.search(read), read
    assert _has_reason('spec = pod["spec"]  # raw read: hot path, per pod per cycle')
    assert not _has_reason('spec = pod["spec"]  # raw read:')
    assert not _has_reason('spec = pod["spec"]  # hot path')
    assert not _has_reason('x = "# raw read: y"; spec = pod["spec"]')
