"""Every import between the package's folders goes down the layers ``autograder.LAYERS`` declares,
counting imports inside functions (the walker of ``test_import_graph``): no folder needs one above it
or beside it, so each can be read with only the layers below it in mind."""
from __future__ import annotations

from autograder import LAYERS
from test_import_graph import import_graph


def unit(module: str) -> str:
    """The folder (or top-level module) of ``autograder`` a module belongs to; "" for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def rank(layers) -> dict[str, int]:
    return {name: i for i, layer in enumerate(layers) for name in layer}


def wrong_imports(graph: dict[str, set[str]], layers) -> list[str]:
    """Each import from one folder to another that does not go to a lower layer, in words."""
    ranks = rank(layers)
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            a, b = unit(module), unit(target)
            if a == b or a == "":
                continue
            if a not in ranks or b not in ranks:
                found.append(f"{module} -> {target}: {a if a not in ranks else b} is in no layer")
            elif ranks[b] >= ranks[a]:
                way = "beside" if ranks[b] == ranks[a] else "up"
                found.append(f"{module} -> {target}: {way} (layer {ranks[a]} {a} imports layer {ranks[b]} {b})")
    return found


def test_every_import_between_folders_goes_down_the_layers():
    wrong = wrong_imports(import_graph(), LAYERS)
    assert not wrong, "imports that do not go down autograder.LAYERS:\n" + "\n".join(wrong)


def test_every_folder_of_the_package_has_one_layer():
    names = [name for layer in LAYERS for name in layer]
    assert len(names) == len(set(names)), "a folder named in two layers"
    units = {unit(m) for m in import_graph()} - {""}
    assert units == set(names), f"in no layer: {sorted(units - set(names))}; no such folder: {sorted(set(names) - units)}"


def too_high(graph: dict[str, set[str]], layers) -> list[str]:
    """Each folder declared above its real level (one above the highest layer it imports, 0 for one that imports
    nothing of the package), in words: a chain where siblings would do says an order the imports do not."""
    ranks, below = rank(layers), {}
    for module, targets in graph.items():
        below.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) not in ("", unit(module)))
    real = {name: 1 + max((ranks.get(b, -1) for b in below.get(name, ())), default=-1) for name in ranks}
    return [f"{name}: layer {ranks[name]}, but it imports nothing above layer {real[name] - 1}"
            for name in sorted(ranks) if real[name] < ranks[name]]


def test_each_layer_is_its_folders_real_level():
    high = too_high(import_graph(), LAYERS)
    assert not high, "folders declared above their real level (move them down, beside their siblings):\n" + "\n".join(high)


def test_the_level_check_finds_a_folder_declared_too_high():
    graph = {"autograder.course.view": {"autograder.inert"}, "autograder.intake.x": {"autograder.inert"}}
    assert too_high(graph, (("inert",), ("course",), ("intake",))) == [
        "intake: layer 2, but it imports nothing above layer 0"]
    assert too_high(graph, (("inert",), ("course", "intake"))) == []


def test_the_check_finds_an_import_up_beside_or_into_no_layer():
    """The check above can fail: an import up, one beside (same layer, another folder) and one into a
    folder with no layer are each found; one down, or within a folder, is not."""
    layers = (("inert", "assignment"), ("course",), ("intake",))
    graph = {"autograder.course.view": {"autograder.intake.expected", "autograder.inert",
                                        "autograder.course.settings"},
             "autograder.inert": {"autograder.assignment"},
             "autograder.intake.expected": {"autograder.course.notebooks", "autograder.newfolder.x"}}
    assert wrong_imports(graph, layers) == [
        "autograder.course.view -> autograder.intake.expected: up (layer 1 course imports layer 2 intake)",
        "autograder.inert -> autograder.assignment: beside (layer 0 inert imports layer 0 assignment)",
        "autograder.intake.expected -> autograder.newfolder.x: newfolder is in no layer"]
    graph = import_graph()
    assert "autograder.sandbox.launch" in graph["autograder.run.server"]       # imported inside a function
    assert "autograder.lifecycle" in graph["autograder.sandbox.forkserver"]    # so is this one
