"""Saves one checkpoint, overwritten every epoch, from inside main()."""
import argparse
import os

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_url", default="output")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_known_args()[0]
    net = torch.nn.Linear(8, 2)
    optim = torch.optim.Adam(net.parameters())
    first_epoch = 1  # majob migrate --to resume: carry on from the newest readable checkpoint
    resume_dir = os.path.join(args.train_url, "ckpt")
    resume_names = sorted(
        (
            name
            for name in (os.listdir(resume_dir) if os.path.isdir(resume_dir) else [])
            if name == "last.pt"
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
        net.load_state_dict(resume_state["net"])
        optim.load_state_dict(resume_state["optim"])
        first_epoch = resume_state["epoch"]
        print(f"resume: {resume_name}, from epoch {first_epoch}")
        break
    for epoch in range(first_epoch, args.epochs + 1):
        optim.step()
        state = {"net": net.state_dict(), "optim": optim.state_dict(), "epoch": epoch + 1}
        if epoch % 2 == 0:  # every other epoch
            checkpoint_file = os.path.join(args.train_url, "ckpt", "last.pt")
            torch.save(state, f"{checkpoint_file}.tmp")
            os.replace(f"{checkpoint_file}.tmp", checkpoint_file)  # atomic: no half-written file
    torch.save(net.state_dict(), os.path.join(args.train_url, "final.pt"))
