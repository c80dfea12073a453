import argparse
import os

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", default="output")
parser.add_argument("--epochs", type=int, default=10)
args, _unknown = parser.parse_known_args()
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ckpt_dir = os.path.join(args.train_url, "ckpt")
os.makedirs(ckpt_dir, exist_ok=True)

# train
first_epoch = 0  # majob migrate --to resume: carry on from the newest readable checkpoint
resume_dir = ckpt_dir
resume_names = sorted(
    (
        name
        for name in (os.listdir(resume_dir) if os.path.isdir(resume_dir) else [])
        if name.startswith("epoch_") and name.endswith(".pt")
    ),
    key=lambda name: (len(name), name),
)
for resume_name in reversed(resume_names):
    try:
        resume_file = os.path.join(resume_dir, resume_name)
        resume_state = torch.load(resume_file, map_location="cpu")
    except Exception as error:  # cut short by a kill during the save: take the one before
        print(f"resume: skipping {resume_name}: {error}")
        continue
    model.load_state_dict(resume_state["model"])
    optimizer.load_state_dict(resume_state["optimizer"])
    first_epoch = resume_state["epoch"] + 1
    print(f"resume: {resume_name}, from epoch {first_epoch}")
    break
for epoch in range(first_epoch, args.epochs):
    optimizer.zero_grad()
    F.cross_entropy(model(torch.randn(4, 8)), torch.zeros(4, dtype=torch.long)).backward()
    optimizer.step()
    checkpoint_file = os.path.join(ckpt_dir, f"epoch_{epoch:03d}.pt")
    torch.save(
        {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
        f"{checkpoint_file}.tmp",
    )
    os.replace(f"{checkpoint_file}.tmp", checkpoint_file)  # atomic: no half-written file
