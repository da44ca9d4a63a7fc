"""Each attack of the corpus (tests/adversarial/) names the layer that must stop it, a row of the README's
layer tables (test_adversarial.py checks that it is stopped)."""
import importlib
import pkgutil
from pathlib import Path

import pytest

import adversarial
from conftest import ROOT

CORPUS = sorted(m.name for m in pkgutil.iter_modules(adversarial.__path__))


def _layer_rows() -> list[str]:
    """The first column of the README's layer tables (the isolation layers and the other defences)."""
    rows, inside = [], False
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith(("| layer |", "| defence |")):
            inside = True
        elif inside and line.startswith("| ") and not line.startswith("| ---"):
            rows.append(line.split(" | ")[0].lstrip("| "))
        elif not line.startswith("|"):
            inside = False
    return rows


@pytest.mark.parametrize("name", CORPUS)
def test_each_attack_names_the_layer_that_stops_it(name):
    """Grepping tests/adversarial/ for a layer finds the attacks it must stop, and the name is one row
    of the README's tables, so a layer renamed or removed there shows its attacks here."""
    layer = getattr(importlib.import_module(f"adversarial.{name}"), "LAYER", None)
    assert layer, f"{name}.py names no LAYER: add LAYER = <a row of the README's layer tables>"
    rows = [r for r in _layer_rows() if r.startswith(layer)]
    assert len(rows) == 1, f"{name}.py: LAYER {layer!r} starts {len(rows)} rows of {_layer_rows()}"
