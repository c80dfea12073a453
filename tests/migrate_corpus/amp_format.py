"""torch.cuda.amp, cuda devices built with % and +, map_location formatted, every rank saves."""
import argparse
import os

import torch  # expect: MA305
import torch.distributed as dist
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--train_url", type=str, default="./out")
    parser.add_argument("--data_url", type=str, default="./data")
    parser.add_argument("--init_method", type=str, default=None)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world_size", type=int, default=1)
    args, _ = parser.parse_known_args()
    if args.world_size > 1:
        dist.init_process_group("gloo", init_method=args.init_method, rank=args.rank, world_size=args.world_size)
    on_gpu = torch.cuda.is_available()  # expect: MA302
    device = torch.device("cuda:%d" % args.gpu if on_gpu else "cpu")  # expect: MA304
    torch.manual_seed(0)
    model = nn.Linear(4, 2).to(device)
    scaler = torch.cuda.amp.GradScaler(enabled=on_gpu)  # expect: MA302
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    resume = os.path.join(args.train_url, "amp.pt")
    if os.path.exists(resume):
        loc = "cuda:" + str(args.gpu) if on_gpu else "cpu"  # expect: MA304
        model.load_state_dict(torch.load(resume, map_location=loc))
    x, y = torch.randn(8, 4, device=device), torch.randint(0, 2, (8,), device=device)
    with torch.autocast(device_type=device.type, enabled=on_gpu):
        loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    os.makedirs(args.train_url, exist_ok=True)
    torch.save(model.state_dict(), resume)  # expect: MA204


if __name__ == "__main__":
    main()
