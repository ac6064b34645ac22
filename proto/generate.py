"""Generate the Python bindings of ``proto/a2a.proto`` into ``proto/gen/``.

Usage::

    python proto/generate.py            # generate when out of date
    python proto/generate.py --force    # always regenerate

Outputs (never edit them by hand; ``proto/gen/`` is gitignored):

* ``gen/a2a_pb2.py`` and ``gen/a2a_pb2.pyi``: protoc's Python bindings (package ``lf.a2a.v1``);
* ``gen/a2a.binpb``: a ``FileDescriptorSet`` of ``a2a.proto`` and everything it imports.

Importing ``a2a_pb2`` registers ``lf.a2a.v1`` in protobuf's *default* descriptor pool, which
``a2a-sdk`` (``a2a.types.a2a_pb2``) also does with a slightly different file, so the two cannot be
imported in one process. Code that may share a process with ``a2a-sdk`` (the test suite) should use
:func:`load_descriptor_pool`, which loads ``a2a.binpb`` into a private pool instead.

This file is not importable as ``proto.generate``: the top-level name ``proto`` belongs to the
``proto-plus`` distribution. Load it by path, e.g. with :func:`importlib.util.spec_from_file_location`,
then call :func:`ensure_generated`, which returns the directory to put on ``sys.path``.

Up to date means: every output exists and ``gen/.stamp`` holds the hash of the inputs
(``a2a.proto``, this script and the protoc version); checking it costs well under a millisecond.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "DESCRIPTOR_SET",
    "GEN_DIR",
    "PROTO_FILE",
    "ensure_generated",
    "include_paths",
    "is_up_to_date",
    "load_descriptor_pool",
]

PROTO_DIR = Path(__file__).resolve().parent
PROTO_FILE = PROTO_DIR / "a2a.proto"
GEN_DIR = PROTO_DIR / "gen"
DESCRIPTOR_SET = GEN_DIR / "a2a.binpb"
STAMP = GEN_DIR / ".stamp"
OUTPUTS = (GEN_DIR / "a2a_pb2.py", GEN_DIR / "a2a_pb2.pyi", DESCRIPTOR_SET)


def include_paths() -> list[Path]:
    """protoc ``-I`` roots: this directory, the well-known protos, the googleapis common protos."""
    grpc_tools_spec = importlib.util.find_spec("grpc_tools")
    if grpc_tools_spec is None or grpc_tools_spec.origin is None:
        raise RuntimeError("grpcio-tools is not installed (pip install -e '.[test]')")
    well_known = Path(grpc_tools_spec.origin).parent / "_proto"

    api_spec = importlib.util.find_spec("google.api.annotations_pb2")
    if api_spec is None or api_spec.origin is None:
        raise RuntimeError("googleapis-common-protos is not installed (pip install -e '.[test]')")
    googleapis = Path(api_spec.origin).parent.parent.parent  # <root>/google/api/annotations_pb2.py

    for root, probe in (
        (well_known, "google/protobuf/struct.proto"),
        (googleapis, "google/api/annotations.proto"),
    ):
        if not (root / probe).is_file():
            raise RuntimeError(f"{probe} not found under {root}")
    return [PROTO_DIR, well_known, googleapis]


def _input_hash() -> str:
    digest = hashlib.sha256()
    digest.update(PROTO_FILE.read_bytes())
    digest.update(Path(__file__).read_bytes())
    digest.update(importlib.metadata.version("grpcio-tools").encode())
    return digest.hexdigest()


def is_up_to_date() -> bool:
    try:
        return all(p.is_file() for p in OUTPUTS) and STAMP.read_text().strip() == _input_hash()
    except OSError:
        return False


def _run_protoc(out_dir: Path) -> None:
    from grpc_tools import protoc  # imported lazily: it is slow and only needed to (re)generate

    args = [
        "grpc_tools.protoc",
        *(f"--proto_path={p}" for p in include_paths()),
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--descriptor_set_out={out_dir / DESCRIPTOR_SET.name}",
        "--include_imports",
        str(PROTO_FILE),
    ]
    code = protoc.main(args)
    if code != 0:
        raise RuntimeError(f"protoc failed with exit code {code}: {' '.join(args[1:])}")


def ensure_generated(force: bool = False) -> Path:
    """Generate the bindings unless they are up to date; return ``GEN_DIR`` (for ``sys.path``).

    Safe to call concurrently: protoc writes into a temporary directory, and each file is then moved
    into place atomically, the stamp last.
    """
    if not force and is_up_to_date():
        return GEN_DIR
    stamp = _input_hash()
    GEN_DIR.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=GEN_DIR))
    try:
        _run_protoc(tmp)
        for output in OUTPUTS:
            os.replace(tmp / output.name, output)
        (tmp / STAMP.name).write_text(stamp + "\n")
        os.replace(tmp / STAMP.name, STAMP)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return GEN_DIR


def load_descriptor_pool() -> tuple[Any, Any]:
    """Load ``a2a.binpb`` into a fresh private ``DescriptorPool``.

    Returns ``(pool, file_descriptor)`` for ``a2a.proto`` (package ``lf.a2a.v1``). Message classes
    come from ``google.protobuf.message_factory.GetMessageClass(pool.FindMessageTypeByName(...))``.
    """
    from google.protobuf import descriptor_pb2, descriptor_pool

    ensure_generated()
    file_set = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTOR_SET.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in file_set.file:  # --include_imports lists dependencies first
        pool.Add(file_proto)
    return pool, pool.FindFileByName(PROTO_FILE.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    args = parser.parse_args(argv)
    if not args.force and is_up_to_date():
        print(f"up to date: {GEN_DIR}")
        return 0
    ensure_generated(force=True)
    print(f"generated: {', '.join(str(p.relative_to(PROTO_DIR.parent)) for p in OUTPUTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
