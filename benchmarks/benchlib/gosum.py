"""Go module sums, to build a peer whose go.mod pins a module version the proxy does not serve, from another
version proved to hold the very same files.

YuniKorn's shim pins its core and scheduler interface at release-candidate tags (``v1.9.0-1``); the
proxy here serves only the release tags (``v1.9.0``), which mark the same commit. go.sum's ``h1:`` line of
the pinned version is a digest of the module's files under ``<module>@<version>/``, so the release's zip,
its files named as the pinned version, must give the same digest: then building against the release builds
what go.mod pins.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from pathlib import Path

CANDIDATE = re.compile(r"^(v\d+\.\d+\.\d+)-\d+$")  # YuniKorn's release-candidate tags: v1.9.0-0, v1.9.0-1


def release_of(version: str) -> str | None:
    """The release tag a release-candidate tag leads to (``v1.9.0-1`` -> ``v1.9.0``); None for others."""
    found = CANDIDATE.match(version)
    return found.group(1) if found else None


def pinned_sum(go_sum: str, module: str, version: str) -> str | None:
    """go.sum's digest of ``module@version``'s files (not of its go.mod)."""
    for line in go_sum.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == module and words[1] == version:
            return words[2]
    return None


def hash1(files: dict[str, bytes]) -> str:
    """Go's ``dirhash.Hash1``: a SHA-256 over the sorted lines ``<sha256 of the file>  <name>``."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files.items()))
    return "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()


def zip_sum_as(zip_path: Path, module: str, served: str, pinned: str) -> str:
    """The ``h1:`` digest of the module zip of ``module@served``, its files named as ``module@pinned``."""
    old, new = f"{module}@{served}/", f"{module}@{pinned}/"
    with zipfile.ZipFile(zip_path) as archive:
        files = {
            new + info.filename.removeprefix(old): archive.read(info)
            for info in archive.infolist()
            if not info.is_dir()
        }
    return hash1(files)
