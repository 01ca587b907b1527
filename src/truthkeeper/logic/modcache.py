"""A quick-load file of truthkeeper's Prolog modules, kept in the user's cache directory.

Every process that opens a memory loads the Prolog modules once. From source that is about
0.05 s (reading and expanding some 3,000 lines); from SWI-Prolog's quick-load format
(``qcompile``) about 0.02 s. The quick-load file is built once per set of sources and
SWI-Prolog version, by a detached ``swipl`` process (it outlives the one that starts it) the first
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
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "build", "cache_dir", "digest", "load"]

CACHE_ENV = "TRUTHKEEPER_CACHE"

# The detached build (argv: scratch directory, target, lock, version): compile in the
# scratch directory when this swipl is the version the process embeds, move the file into
# place, and always remove the scratch directory and the lock.
_BUILD_GOAL = (
    "current_prolog_flag(argv, Argv), append(_, [Dir, Qlf, Lock, Want], Argv), "
    "setup_call_cleanup(true, "
    "( current_prolog_flag(version, V), atom_number(Want, V), working_directory(_, Dir), "
    "  set_prolog_flag(optimise, true), qcompile(truthkeeper, [include(user)]), "
    "  directory_file_path(Dir, 'truthkeeper.qlf', Made), rename_file(Made, Qlf) ), "
    "( catch(delete_directory_and_contents(Dir), _, true), "
    "  catch(delete_file(Lock), _, true) ))")


# Compiled optimised (arithmetic as virtual-machine instructions, not calls: Phi_T over 50
# candidates 8% faster), the flag as it was for whatever loads after
_LOAD_SOURCE = ("current_prolog_flag(optimise, _O), set_prolog_flag(optimise, true), "
                "setup_call_cleanup(true, use_module(File), set_prolog_flag(optimise, _O))")


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
    """What names a quick-load file: the SWI-Prolog version, the compilation's mode
    (optimised) and every module's text."""
    h = hashlib.sha256(version.encode() + b"\0optimise")
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
    janus.query_once(_LOAD_SOURCE, {"File": str(prolog_dir / "truthkeeper.pl")})
    if found is not None:
        build(prolog_dir, *found)
    return "source"


def build(prolog_dir: Path, qlf: Path, version: str, *, wait: bool = False) -> bool:
    """Start building the quick-load file of ``prolog_dir``'s modules as ``qlf`` with the
    ``swipl`` on PATH (or under ``$SWI_HOME_DIR``), if it is the ``version`` the process
    embeds: the sources are copied to a scratch directory and a detached ``swipl`` compiles
    them there, moves the file into place and removes the scratch directory and the lock.
    The build outlives this process (a short one, a CLI command, would otherwise never
    finish it). Whether a build was started; with ``wait``, whether the file is there."""
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
        for old in d.glob("build-*"):  # left by a build that was killed
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
        tmp = ""
        try:
            tmp = tempfile.mkdtemp(prefix="build-", dir=d)
            for p in prolog_dir.glob("*.pl"):
                shutil.copy(p, tmp)
            devnull = os.open(os.devnull, os.O_RDWR)
            try:
                pid = os.posix_spawn(swipl, [
                    swipl, "-q", "-f", "none", "--no-packs", "-g", _BUILD_GOAL, "-t", "halt",
                    "--", tmp, str(qlf), str(lock), version], os.environ,
                    file_actions=[(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)],
                    setsid=True)
            finally:
                os.close(devnull)
        except BaseException:
            with contextlib.suppress(OSError):
                lock.unlink()
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        if wait:
            os.waitpid(pid, 0)
            return qlf.is_file()
        # reaped when it ends (no zombie); a daemon thread does not hold up the exit
        threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True,
                         name="truthkeeper-qlf").start()
        return True
    except OSError:
        return False
