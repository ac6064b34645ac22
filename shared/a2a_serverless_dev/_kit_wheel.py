"""The installed kit packed as a wheel: what an agent project's ``kit/`` holds until the kit is on a
package index (:mod:`.project`).

It is packed from what is installed, whatever the install (an editable checkout, a wheel, an index),
so a project made by any of them carries the very kit that made it: the files of its two packages (the
runtime, ``a2a_serverless``, and this developer kit, ``a2a_serverless_dev``; no bytecode) and the
distribution's metadata, in a pure-Python wheel (the binary distribution format, PEP 427).

Its version is the kit's with a local label naming its content (``0.1.0+kit.3f2a9c1b0d4e``, PEP 440):
PyPI refuses local versions, so no public index can serve a package that would win over the wheel
(pip prefers an index's candidate to a ``--find-links`` file of the same version), and a changed kit
is a new version that ``pip install`` takes. The same kit packs to the same bytes (fixed timestamps,
sorted entries): refreshing a project with an unchanged kit changes nothing.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = ["DIST", "KitWheel", "pack_kit_wheel"]

DIST = "a2a-serverless"
_PACKAGE = "a2a_serverless"
"""The runtime package, which names the wheel's files as the distribution's name does."""
_PACKAGES = (_PACKAGE, "a2a_serverless_dev")
"""The distribution's import packages: the runtime and the developer kit (this package)."""
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry
_VERSION = re.compile(r"^Version: (.*)$", re.MULTILINE)
_WHEEL = "Wheel-Version: 1.0\nGenerator: a2a-serverless init\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


@dataclass(frozen=True, slots=True)
class KitWheel:
    path: Path
    version: str
    """The wheel's version: the kit's, with the local label naming its content."""


def pack_kit_wheel(directory: Path) -> KitWheel:
    """Write the installed kit as a wheel into ``directory``. Raises ``metadata.PackageNotFoundError``
    when the kit is not installed (only its sources are on the path)."""
    distribution = metadata.distribution(DIST)
    text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or ""
    shared = Path(__file__).resolve().parents[1]
    files = {
        f"{name}/{path.relative_to(shared / name).as_posix()}": path
        for name in _PACKAGES
        for path in sorted((shared / name).rglob("*"))
        if path.is_file() and not _skipped(path.relative_to(shared / name))
    }
    digest = hashlib.sha256(_VERSION.sub("", text, count=1).encode())
    for name, path in files.items():
        digest.update(f"\0{name}\0".encode())
        digest.update(path.read_bytes())
    version = f"{distribution.version.partition('+')[0]}+kit.{digest.hexdigest()[:12]}"
    dist_info = f"{_PACKAGE}-{version}.dist-info"
    entries: list[tuple[str, bytes, int]] = [
        (name, path.read_bytes(), 0o755 if path.stat().st_mode & 0o111 else 0o644) for name, path in files.items()
    ]
    entries.append((f"{dist_info}/METADATA", _VERSION.sub(f"Version: {version}", text, count=1).encode(), 0o644))
    entry_points = distribution.read_text("entry_points.txt")
    if entry_points:
        entries.append((f"{dist_info}/entry_points.txt", entry_points.encode(), 0o644))
    entries.append((f"{dist_info}/WHEEL", _WHEEL.encode(), 0o644))
    record = "".join(f"{name},sha256={_b64(hashlib.sha256(data).digest())},{len(data)}\n" for name, data, _ in entries)
    entries.append((f"{dist_info}/RECORD", f"{record}{dist_info}/RECORD,,\n".encode(), 0o644))
    path = directory / f"{_PACKAGE}-{version}-py3-none-any.whl"
    directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = (0o100000 | mode) << 16  # a regular file and its permissions
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return KitWheel(path=path, version=version)


def _skipped(relative: Path) -> bool:
    return any(part == "__pycache__" or part.startswith(".") for part in relative.parts) or relative.suffix in {
        ".pyc",
        ".pyo",
    }


def _b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
