"""PyTorch Lightning CLI style: LightningCLI parses sys.argv itself and rejects the --data_url
and --train_url that ModelArts adds."""
# check-only: needs lightning (not installed here; see README)
import torch
import torch.nn as nn
from pytorch_lightning import LightningDataModule, LightningModule
from pytorch_lightning.cli import LightningCLI
from torch.utils.data import DataLoader, TensorDataset


class BoringModel(LightningModule):
    def __init__(self, hidden: int = 8):
        super().__init__()
        self.layer = nn.Linear(hidden, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class RandomData(LightningDataModule):
    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,))), batch_size=8)


def cli_main():
    cli = LightningCLI(BoringModel, RandomData)  # expect: MA107 @framework


if __name__ == "__main__":
    cli_main()
