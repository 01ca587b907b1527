"""A quick-load file of truthkeeper's Prolog modules, kept in the user's cache directory.

Every process that opens a memory loads the Prolog modules once. From source that is about
0.05 s (reading and expanding some 3,000 lines); from SWI-Prolog's quick-load format
(``qcompile``) about 0.02 s. The quick-load file is built once per set of sources and
SWI-Prolog version, by a separate ``swipl`` process started in the background the first
time a process loads from source, and it is named by a digest of the sources and the
version: a changed source or another SWI-Prolog never loads an old file.

The directory is ``$TRUTHKEEPER_CACHE`` (set it empty to turn the cache off), else
``$XDG_CACHE_HOME/truthkeeper`` or ``~/.cache/truthkeeper``. It must belong to the user and
be writable by no one else, since what it holds is code: otherwise it is not used.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "build", "cache_dir", "digest", "load"]

CACHE_ENV = "TRUTHKEEPER_CACHE"

_BUILD_GOAL = ("current_prolog_flag(version, V), write(V), nl, "
               "qcompile(truthkeeper, [include(user)])")


def cache_dir() -> Path | None:
    """Where the quick-load files are kept; None when the cache is turned off."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return Path(env) if env else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home to speak of: no cache, not one under the cwd
        return None
    return Path(base) / "truthkeeper"


def _private(d: Path) -> bool:
    """The directory belongs to this user and no one else may write to it."""
    uid = getattr(os, "getuid", None)  # POSIX only: elsewhere no cache
    try:
        st = d.stat()
    except OSError:
        return False
    return uid is not None and st.st_uid == uid() and not st.st_mode & 0o022


def _quick_load_file(qlf: Path) -> bool:
    """The file begins as a quick-load file does (a damaged one is never handed to
    SWI-Prolog, which would warn and load nothing)."""
    try:
        with qlf.open("rb") as fh:
            return fh.read(len(_MAGIC)) == _MAGIC
    except OSError:
        return False


_MAGIC = b"SWI-Prolog .qlf file\n"


def digest(prolog_dir: Path, version: str) -> str:
    """What names a quick-load file: the SWI-Prolog version and every module's text."""
    h = hashlib.sha256(version.encode())
    for p in sorted(prolog_dir.glob("*.pl")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _qlf(janus: Any, prolog_dir: Path) -> tuple[Path, str] | None:
    """The quick-load file for these sources and this SWI-Prolog, and the version."""
    d = cache_dir()
    if d is None:
        return None
    version = str(janus.query_once("current_prolog_flag(version, V)")["V"])
    return d / f"modules-{digest(prolog_dir, version)}.qlf", version


def load(janus: Any, prolog_dir: Path) -> str:
    """Load the modules into the embedded SWI-Prolog: from the quick-load file when the
    cache holds one, else from source (and build the file in the background). Returns
    ``"qlf"`` or ``"source"``. A janus error loading from source reaches the caller."""
    found = _qlf(janus, prolog_dir)
    if found is not None:
        qlf, version = found
        if _private(qlf.parent) and qlf.is_file():
            loaded: dict[str, Any] = {}
            if _quick_load_file(qlf):
                try:
                    janus.query_once("load_files(F, [])", {"F": str(qlf)})
                    loaded = janus.query_once("current_predicate(truthkeeper:tk_error/3)")
                except janus.PrologError:
                    pass
            if loaded.get("truth"):
                return "qlf"
            with contextlib.suppress(OSError):
                qlf.unlink()  # not one to load: the source is loaded, the file rebuilt
    janus.query_once("use_module(File)", {"File": str(prolog_dir / "truthkeeper.pl")})
    if found is not None:
        threading.Thread(target=build, args=(prolog_dir, *found), daemon=True,
                         name="truthkeeper-qlf").start()
    return "source"


def build(prolog_dir: Path, qlf: Path, version: str) -> bool:
    """Build the quick-load file of ``prolog_dir``'s modules as ``qlf`` with the ``swipl``
    on PATH (or under ``$SWI_HOME_DIR``), if it is the ``version`` the process embeds; in a
    scratch directory, moved into place when complete. Whether the file is there."""
    swipl = shutil.which("swipl")
    home = os.environ.get("SWI_HOME_DIR")
    if swipl is None and home:
        candidate = Path(home).parents[1] / "bin" / "swipl"
        swipl = str(candidate) if candidate.is_file() else None
    if swipl is None:
        return False
    d = qlf.parent
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(d):
            return False
        for old in d.glob("build-*"):  # left by a process that ended while building
            if time.time() - old.stat().st_mtime > 3600:
                shutil.rmtree(old, ignore_errors=True)
        lock = qlf.with_suffix(".building")
        with contextlib.suppress(OSError):
            if time.time() - lock.stat().st_mtime > 300:
                lock.unlink()  # its builder ended without removing it
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            return False  # another process is building it
        try:
            return _compile(swipl, prolog_dir, d, qlf, version)
        finally:
            with contextlib.suppress(OSError):
                lock.unlink()
    except (OSError, subprocess.SubprocessError):
        return False


def _compile(swipl: str, prolog_dir: Path, d: Path, qlf: Path, version: str) -> bool:
    """``qcompile`` in a scratch directory of ``d``, the result moved to ``qlf``."""
    try:
        with tempfile.TemporaryDirectory(prefix="build-", dir=d) as tmp:
            for p in prolog_dir.glob("*.pl"):
                shutil.copy(p, tmp)
            out = subprocess.run([swipl, "-q", "-f", "none", "--no-packs", "-g", _BUILD_GOAL,
                                  "-t", "halt"], cwd=tmp, capture_output=True, text=True,
                                 timeout=300, check=False)
            made = Path(tmp) / "truthkeeper.qlf"
            if out.returncode != 0 or out.stdout.strip() != version or not made.is_file():
                return False
            os.replace(made, qlf)
    except (OSError, subprocess.SubprocessError):
        return False
    return True
