"""The precision corpus's one script: a tiny MLP on seeded data, four optimizer steps. The
reference runs it with the defaults; each planted run changes one flag (tests/precision_corpus/
corpus.py says which and where compare must find it)."""

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", default="out")
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--loss_scale", type=float, default=1.0)
parser.add_argument("--fc2_dtype", default="float32")
parser.add_argument("--nan_step", type=int, default=-1)
parser.add_argument("--nan_data", type=int, default=0)
args, _ = parser.parse_known_args()
torch.set_num_threads(1)

generator = torch.Generator().manual_seed(0)
data = torch.randn(4, 32, 8, generator=generator)
target = torch.randn(4, 32, 1, generator=generator)
if args.nan_data:
    data[:, 0, 0] = float("nan")  # a broken sample in every batch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 16).to(getattr(torch, args.fc2_dtype))
        self.fc3 = torch.nn.Linear(16, 1)

    def forward(self, x: torch.Tensor, shift: float) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        h = torch.log(h + shift)  # shift is -1000 at --nan_step: the log of a negative is NaN
        h = self.fc2(h.to(self.fc2.weight.dtype)).to(torch.float32)  # the layer of --fc2_dtype
        return self.fc3(torch.relu(h))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
for step in range(4):
    shift = -1000.0 if step == args.nan_step else 1.0
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(data[step], shift), target[step])
    (loss * args.loss_scale).backward()  # a loss scale that is never undone
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f}")
