"""Tutorial style with no argparse: the paths live in local variables of functions, one built by
an f-string and saved later, one joined from a local root."""
import os

import numpy as np
import torch  # expect: MA305
import torch.nn as nn


def load_data():
    root = "./datasets/toy"  # expect: MA101 @local-var
    x = np.load(os.path.join(root, "x.npy"))
    return torch.from_numpy(x)


def train(epochs=1):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")  # expect: MA302, MA304
    data = load_data().to(device)
    net = nn.Linear(data.shape[1], 1).to(device)
    opt = torch.optim.Adam(net.parameters())
    for epoch in range(epochs):
        opt.zero_grad()
        loss = net(data).pow(2).mean()
        loss.backward()
        opt.step()
        snapshot = f"snapshots/net_{epoch:03d}.pth"  # expect: MA102 @local-var
        os.makedirs(os.path.dirname(snapshot), exist_ok=True)
        torch.save(net.state_dict(), snapshot)  # expect: MA401, MA403
    SAVE_TO = "./final_net.pth"  # expect: MA102 @local-var
    torch.save(net.state_dict(), SAVE_TO)


if __name__ == "__main__":
    train()
