"""ddp-tutorial multigpu_torchrun style, written for torchrun only: LOCAL_RANK read with
os.environ[...] (a KeyError under plain python), model.to(self.gpu_id) with a bare integer
device, and a snapshot path kept in a local variable of main()."""
# data: train.npy
import argparse
import os

import numpy as np
import torch  # expect: MA305
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def ddp_setup():
    init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")  # expect: MA210, MA301, MA302
    if torch.cuda.is_available():  # expect: MA302
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # expect: MA302, MA211 @multinode


class Trainer:
    def __init__(self, model, train_data, optimizer, snapshot_path):
        self.gpu_id = int(os.environ["LOCAL_RANK"])  # expect: MA211 @multinode
        self.model = model.to(self.gpu_id) if torch.cuda.is_available() else model  # expect: MA302, MA307
        self.train_data = train_data
        self.optimizer = optimizer
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            snapshot = torch.load(snapshot_path, map_location="cpu")
            self.model.load_state_dict(snapshot["MODEL_STATE"])
            self.epochs_run = snapshot["EPOCHS_RUN"]
        self.model = DDP(self.model)

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self.train_data.sampler.set_epoch(epoch)
            for source, targets in self.train_data:
                self.optimizer.zero_grad()
                F.cross_entropy(self.model(source), targets).backward()
                self.optimizer.step()
            if self.gpu_id == 0:
                snapshot = {"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch + 1}
                torch.save(snapshot, self.snapshot_path)  # expect: MA206, MA403


def main():
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("--total_epochs", default=1, type=int)
    parser.add_argument("--data", default="data", type=str)  # expect: MA101
    args, _ = parser.parse_known_args()  # expect: MA103
    ddp_setup()
    features = torch.from_numpy(np.load(os.path.join(args.data, "train.npy"))).float()
    dataset = TensorDataset(features, torch.randint(0, 2, (len(features),)))
    loader = DataLoader(dataset, batch_size=8, shuffle=False, sampler=DistributedSampler(dataset))
    model = torch.nn.Linear(8, 2)
    snapshot_path = "snapshot.pt"  # expect: MA102 @local-var
    trainer = Trainer(model, loader, torch.optim.SGD(model.parameters(), lr=1e-3), snapshot_path)
    trainer.train(args.total_epochs)
    destroy_process_group()


if __name__ == "__main__":
    main()
