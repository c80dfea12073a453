"""PyTorch Lightning style: a LightningModule, ModelCheckpoint() with no dirpath, a Trainer with
no default_root_dir (both write under the working directory), a TensorBoardLogger."""
# check-only: needs lightning (not installed here; see README)
import argparse

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import TensorBoardLogger
from torch.utils.data import DataLoader, TensorDataset


class LitClassifier(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.layer = nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_epochs", type=int, default=1)
    parser.add_argument("--data_dir", type=str, default="./data")  # expect: MA101
    args = parser.parse_args()  # expect: MA103, MA104
    dataset = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    checkpoint_callback = ModelCheckpoint(monitor="train_loss", save_top_k=1)  # expect: MA102 @framework
    logger = TensorBoardLogger("tb_logs", name="lit_classifier")  # expect: MA102 @framework
    trainer = L.Trainer(max_epochs=args.max_epochs, accelerator="gpu", devices=1,  # expect: MA102 @framework
                        callbacks=[checkpoint_callback])
    trainer.fit(LitClassifier(), DataLoader(dataset, batch_size=8))
    trainer.save_checkpoint("final.ckpt")  # expect: MA102 @framework


if __name__ == "__main__":
    main()
