"""An older multi-node recipe: MASTER_ADDR set in code, a tcp:// address in the call, --rank and
--world-size flags, checkpoints on every rank."""
import argparse
import os

import torch  # expect: MA305
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)  # expect: MA106
    parser.add_argument("--out", default="ckpt")  # expect: MA102
    args = parser.parse_args()  # expect: MA103, MA104
    os.environ["MASTER_ADDR"] = "10.1.0.4"  # expect: MA207 @multinode
    dist.init_process_group("nccl", init_method="tcp://10.1.0.4:29500", rank=args.rank, world_size=args.world_size)  # expect: MA208, MA301 @multinode
    torch.cuda.set_device(args.rank % torch.cuda.device_count())  # expect: MA302
    model = DistributedDataParallel(nn.Linear(8, 2).cuda())  # expect: MA303
    data = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    loader = DataLoader(data, batch_size=4, shuffle=True)  # expect: MA202
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()  # expect: MA303
        opt.step()
    os.makedirs(args.out, exist_ok=True)
    torch.save(model.module.state_dict(), os.path.join(args.out, "model.pt"))  # expect: MA204


if __name__ == "__main__":
    main()
