"""Every part of a feature slice has its floor: `resolver/features/<name>/` holds `contract.py`,
`worker.py` and `callbacks.py` (any of them), and the `flow` import contract names each one on
its floor, so a new slice or a new part cannot escape the layers unseen."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ROOT / "resolver" / "features"
PARTS = {"contract", "worker", "callbacks"}


def _flow_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    (flow,) = [c for c in contracts if c["name"].startswith("flow:")]
    return [
        {name.strip() for name in layer.replace(":", "|").split("|")} for layer in flow["layers"]
    ]


def test_each_part_of_a_feature_is_named_on_its_floor() -> None:
    layers = _flow_layers()
    named = set().union(*layers)
    floor_of = {part: i for i, layer in enumerate(layers) for part in layer}
    slices = sorted(p for p in FEATURES.iterdir() if (p / "__init__.py").is_file())
    assert slices, "no feature slices found"
    for folder in slices:
        for path in sorted(folder.glob("*.py")):
            if path.stem == "__init__":
                continue
            module = f"resolver.features.{folder.name}.{path.stem}"
            assert path.stem in PARTS, f"{module}: a slice's parts are {sorted(PARTS)}"
            assert module in named, f"{module} is on no floor of the flow contract"
    # The parts sit on the floors their names say.
    for module, floor in floor_of.items():
        if module.startswith("resolver.features."):
            part = module.rsplit(".", 1)[1]
            beside = {"contract": "resolver.contract", "worker": "resolver.worker"}.get(part)
            if beside is not None:
                assert floor == floor_of[beside], f"{module} is not on the {part} floor"
            else:
                assert floor == floor_of["resolver.callbacks"] + 1, f"{module}: under callbacks"
