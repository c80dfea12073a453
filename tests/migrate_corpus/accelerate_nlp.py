"""Hugging Face accelerate nlp_example style: an Accelerator meant for `accelerate launch`,
--output_dir '.', save_state per epoch in a folder built in a local variable."""
# check-only: needs accelerate (not installed here; see README)
import argparse
import os

import torch  # accelerate imports torch_npu itself: MA305 is only a note here
from accelerate import Accelerator
from torch.optim import AdamW
from torch.utils.data import DataLoader, TensorDataset


def training_function(args):
    accelerator = Accelerator(cpu=args.cpu, mixed_precision=args.mixed_precision)  # expect: MA211 @framework
    dataset = TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,)))
    train_dataloader = DataLoader(dataset, shuffle=True, batch_size=8)
    model = torch.nn.Linear(8, 2)
    optimizer = AdamW(params=model.parameters(), lr=2e-5)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(args.num_epochs):
        model.train()
        for inputs, labels in train_dataloader:
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        output_dir = f"epoch_{epoch}"
        if args.output_dir is not None:
            output_dir = os.path.join(args.output_dir, output_dir)
        accelerator.save_state(output_dir)  # expect: MA401
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    accelerator.save(unwrapped.state_dict(), os.path.join(args.output_dir, "model.pt"))


def main():
    parser = argparse.ArgumentParser(description="Simple example of training script.")
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16", "fp8"])
    parser.add_argument("--cpu", action="store_true", help="If passed, will train on the CPU.")
    parser.add_argument("--num_epochs", type=int, default=1)
    parser.add_argument("--output_dir", type=str, default=".", help="Where to save the states.")  # expect: MA102
    args = parser.parse_args()  # expect: MA103, MA104
    training_function(args)


if __name__ == "__main__":
    main()
