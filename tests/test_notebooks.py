"""The notebooks run top to bottom without error (small settings), and the committed ones are
what scripts/build_notebooks.py writes, with the outputs of a clean run."""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELLS = runpy.run_path(str(ROOT / "scripts" / "build_notebooks.py"))["NB"]


def test_there_are_five_notebooks_built_from_the_script() -> None:
    assert [p.stem for p in NOTEBOOKS] == sorted(CELLS) and len(NOTEBOOKS) == 5
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert [c.source for c in nb.cells] == [src for _, src in CELLS[path.stem]], path.name
        code = [c for c in nb.cells if c.cell_type == "code"]
        # committed with the outputs of one clean top-to-bottom run
        assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), path.name
        assert all(o.output_type != "error" for c in code for o in c.outputs), path.name
        assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
