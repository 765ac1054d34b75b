"""Run by test_torchrun.py under `torchrun --nproc_per_node 2`: train a tiny translation model
and save this rank's final weights, so the test can compare the ranks."""

import sys

import torch

from attnlab.config import load_config
from attnlab.train import distributed
from attnlab.train.checkpoint import RunDir
from attnlab.train.experiment import prepare_run
from attnlab.translation import RunConfig, TranslationTask

config_path, run_dir, out_prefix = sys.argv[1:4]
config = load_config(config_path, RunConfig)
context = distributed.setup("cpu")
trainer = prepare_run(TranslationTask, config, RunDir(run_dir), context, log=lambda _: None)
result = trainer.fit(progress=False)
task = trainer.task
torch.save({"steps": result.steps, "rank": context.rank, "world": context.world_size,
            "weights": task.model.state_dict()}, f"{out_prefix}{context.rank}.pt")
distributed.teardown(context)
