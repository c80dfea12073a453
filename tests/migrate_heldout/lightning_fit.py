"""Lightning, the style of its docs: a LightningModule, fit() with a Trainer and a checkpoint
callback that name no folder, a CSV logger given a relative one."""
import argparse

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, TensorDataset


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()  # expect: MA103, MA104
    data = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    ckpt = ModelCheckpoint(monitor="loss", save_last=True)  # expect: MA102 @framework
    trainer = pl.Trainer(max_epochs=args.epochs, callbacks=[ckpt], logger=CSVLogger("csv_logs"))  # expect: MA102 @framework
    trainer.fit(Regressor(), DataLoader(data, batch_size=8))
    model = torch.compile(Regressor())  # expect: MA328 @framework


if __name__ == "__main__":
    main()
