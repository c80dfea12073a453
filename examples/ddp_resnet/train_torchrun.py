"""The same training as train.py, launched by torchrun instead of ModelArts (for the benchmark).

torchrun sets RANK and WORLD_SIZE and the env:// rendezvous; train.py takes them as arguments.
  torchrun --standalone --nproc_per_node 4 train_torchrun.py --data_url=... --train_url=...
"""

import os
import sys

from train import main

if __name__ == "__main__":
    main(
        [
            "--init_method=env://",
            f"--rank={os.environ['RANK']}",
            f"--world_size={os.environ['WORLD_SIZE']}",
            *sys.argv[1:],
        ]
    )
