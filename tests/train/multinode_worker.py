"""`python -m attnlab ARGS` that also saves this rank's final weights to OUT/rank<r>.pt.

test_multinode.py runs it as `torchrun ... -m multinode_worker OUT ARGS` so that it can compare
what every rank ends with (the run's checkpoint holds rank 0's weights only). Nothing else
differs from `torchrun ... -m attnlab ARGS`: the same main(), the same Trainer.fit.
"""

import sys
from pathlib import Path

import torch

from attnlab.cli import main
from attnlab.train.loop import Trainer

out, argv = Path(sys.argv[1]), sys.argv[2:]
fit = Trainer.fit


def fit_then_save(self, *args, **kwargs):
    result = fit(self, *args, **kwargs)
    weights = {name: value.detach().cpu().clone()
               for name, value in self.model.state_dict().items()}
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"rank": self.context.rank, "world_size": self.context.world_size,
                "steps": result.steps, "weights": weights}, out / f"rank{self.context.rank}.pt")
    return result


Trainer.fit = fit_then_save
sys.exit(main(argv))
