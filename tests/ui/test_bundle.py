"""The committed UI bundle is current: built from the sources as they are now.

``npm run build`` (frontend/scripts/source-hash.mjs) records a hash of the UI sources in
``static/build-info.json``; this recomputes it with the same rule. A failure means a
source changed without ``cd frontend && npm ci && npm run build``.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

from headwater.ui import STATIC_DIR

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"
INPUTS = [
    "index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "src",
    "docs",
]
#: What frontend/scripts/vendor-docs.mjs copies for the API documentation pages.
DOCS_ASSETS = [
    "redoc-init.js", "redoc.LICENSE.txt", "redoc.standalone.js", "redoc.standalone.js.LICENSE.txt",
    "swagger-init.js", "swagger-ui-bundle.js", "swagger-ui.LICENSE.txt", "swagger-ui.css",
]


def source_hash(root: Path) -> tuple[str, int]:
    files: list[str] = []
    for name in INPUTS:
        path = root / name
        if path.is_dir():
            files += [p.relative_to(root).as_posix() for p in path.rglob("*") if p.is_file()]
        else:
            files.append(name)
    # The build sorts by JavaScript's default string order (UTF-16 code units); for the
    # ASCII names used here that is the same as Python's.
    files.sort()
    digest = hashlib.sha256()
    for name in files:
        digest.update(f"{name}\n".encode())
        digest.update((root / name).read_bytes())
        digest.update(b"\n")
    return digest.hexdigest(), len(files)


def test_committed_bundle_matches_the_sources() -> None:
    recorded = json.loads((STATIC_DIR / "build-info.json").read_text())
    expected, count = source_hash(FRONTEND)
    assert recorded["files"] == count
    assert recorded["sourceHash"] == expected, (
        "the UI sources changed since the bundle was built: cd frontend && npm ci && npm run build"
    )


def test_bundle_has_no_source_maps_or_stray_files() -> None:
    names = sorted(
        p.relative_to(STATIC_DIR).as_posix() for p in STATIC_DIR.rglob("*") if p.is_file()
    )
    assert "index.html" in names and "build-info.json" in names
    assert not [n for n in names if n.endswith(".map")]
    assets = [n for n in names if n.startswith("assets/")]
    docs = [n for n in names if n.startswith("docs/")]
    assert docs == [f"docs/{name}" for name in DOCS_ASSETS]
    assert len(assets) == len(names) - 2 - len(docs)


def test_the_api_docs_assets_are_committed() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "--", str(STATIC_DIR / "docs")],
        capture_output=True, text=True, check=True, cwd=FRONTEND.parent,
    ).stdout.split()
    assert sorted(Path(path).name for path in listed) == DOCS_ASSETS


def test_the_assets_the_page_names_are_committed() -> None:
    # A rebuilt bundle has new file names; committing index.html without `git add`ing the
    # new script would ship a page whose script is missing.
    page = (STATIC_DIR / "index.html").read_text()
    named = re.findall(r'"/static/(assets/[^"]+)"', page)
    assert any(name.endswith(".js") for name in named)
    listed = subprocess.run(
        ["git", "ls-files", "--", *(str(STATIC_DIR / name) for name in named)],
        capture_output=True, text=True, check=True, cwd=FRONTEND.parent,
    ).stdout.split()
    tracked = {f"assets/{Path(path).name}" for path in listed}
    missing = sorted(set(named) - tracked)
    assert not missing, f"not in git: {missing} (git add src/headwater/ui/static)"
