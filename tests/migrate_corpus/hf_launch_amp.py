"""HuggingFace-examples style: torch.distributed.launch with --local_rank, torch.cuda.amp, SummaryWriter."""
import argparse
import logging
import os

import torch  # expect: MA305
from torch.cuda.amp import GradScaler, autocast  # expect: MA302
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)


def train(args, train_dataset, model):
    if args.local_rank in [-1, 0]:
        tb_writer = SummaryWriter()  # expect: MA102
    train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    scaler = GradScaler(enabled=args.fp16)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)  # expect: MA201
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.local_rank], output_device=args.local_rank
        )
    global_step = 0
    for epoch in range(int(args.num_train_epochs)):  # expect: MA203
        for batch in train_dataloader:
            model.train()
            batch = tuple(t.to(args.device) for t in batch)
            with autocast(enabled=args.fp16):
                loss = torch.nn.functional.cross_entropy(model(batch[0]), batch[1])
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            global_step += 1
            if args.local_rank in [-1, 0]:
                tb_writer.add_scalar("loss", loss.item(), global_step)
            break
    if args.local_rank in [-1, 0]:
        tb_writer.close()
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="./output", type=str)  # expect: MA102
    parser.add_argument("--train_batch_size", default=8, type=int)
    parser.add_argument("--learning_rate", default=5e-5, type=float)
    parser.add_argument("--num_train_epochs", default=1.0, type=float)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--no_cuda", action="store_true")
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()  # expect: MA103, MA104

    if args.local_rank == -1 or args.no_cuda:
        device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")  # expect: MA302, MA304
        args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()  # expect: MA302
    else:
        torch.cuda.set_device(args.local_rank)  # expect: MA302
        device = torch.device("cuda", args.local_rank)  # expect: MA304
        torch.distributed.init_process_group(backend="nccl")  # expect: MA210, MA301
        args.n_gpu = 1
    args.device = device
    logging.basicConfig(level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN)
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    model = torch.nn.Linear(8, 2).to(args.device)
    model = train(args, dataset, model)
    if args.local_rank == -1 or torch.distributed.get_rank() == 0:
        if not os.path.exists(args.output_dir) and args.local_rank in [-1, 0]:
            os.makedirs(args.output_dir)
        model_to_save = model.module if hasattr(model, "module") else model
        torch.save(model_to_save.state_dict(), os.path.join(args.output_dir, "pytorch_model.bin"))


if __name__ == "__main__":
    main()
