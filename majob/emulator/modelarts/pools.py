"""The flavors of a dedicated resource pool: ``modelarts.pool.visual.{x,2x,4x,8x,16x}large``,
1/2/4/8/16 cards of a GPU/Ascend pool (reference modelarts.md §2.3; the API reference's
custom-image example creates a job on ``modelarts.pool.visual.xlarge`` with a ``pool_id``).

A dedicated CPU pool takes no flavor at all (``dedicated_cpu_pool``). The emulator has no pools
to manage: any ``pool_id`` is taken as one, and a pool flavor is what
that id names. Only the card count is documented; the vCPUs and memory per card below are this
emulator's assumption (they only scale the measured CPU and memory percentages).
"""

from __future__ import annotations

import re

from majob.emulator.modelarts.catalog import FakeFlavor

POOL_FLAVOR = re.compile(r"^modelarts\.pool\.visual\.(?P<cards>\d*)xlarge$")
CARDS = (1, 2, 4, 8, 16)
POOL_MAX_NODES = 16
CORES_PER_CARD = 8
MEMORY_GB_PER_CARD = 64


def pool_flavor(flavor_id: str) -> FakeFlavor | None:
    """The dedicated-pool flavor ``flavor_id`` names; None when it names none."""
    found = POOL_FLAVOR.match(flavor_id)
    cards = int(found["cards"] or 1) if found else 0
    if cards not in CARDS:
        return None
    return FakeFlavor(
        {
            "flavor_id": flavor_id,
            "flavor_name": f"dedicated pool, {cards} card{'s' if cards > 1 else ''}",
            "flavor_type": "GPU",
            "billing": {"code": flavor_id, "unit_num": cards},
            "max_num": 16,
            "flavor_info": {
                "max_num": 16,
                "cpu": {"arch": "x86", "core_num": cards * CORES_PER_CARD},
                "gpu": {"unit_num": cards, "product_name": "dedicated", "memory": ""},
                "memory": {"size": cards * MEMORY_GB_PER_CARD, "unit": "GB"},
            },
        }
    )


def dedicated_cpu_pool(pool_id: str) -> FakeFlavor:
    """The resources of a job in a dedicated CPU pool, which takes no flavor_id (reference
    modelarts.md §2.3): CPU only, no accelerators."""
    return FakeFlavor(
        {
            "flavor_id": "",
            "flavor_name": f"dedicated CPU pool {pool_id}",
            "flavor_type": "CPU",
            "max_num": POOL_MAX_NODES,
            "flavor_info": {"max_num": POOL_MAX_NODES},
        }
    )
