"""detectron2/yacs style: a cfg object with OUTPUT_DIR and MODEL.WEIGHTS, launch() with mp.spawn, comm helpers."""
import argparse
import os
from types import SimpleNamespace

import torch  # expect: MA305
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_cfg():
    cfg = SimpleNamespace()
    cfg.OUTPUT_DIR = "./output"  # expect: MA102
    cfg.MODEL = SimpleNamespace(WEIGHTS="", DEVICE="cuda")  # expect: MA304
    cfg.SOLVER = SimpleNamespace(BASE_LR=0.02, MAX_ITER=1, IMS_PER_BATCH=8, CHECKPOINT_PERIOD=1)
    cfg.DATASETS = SimpleNamespace(ROOT="datasets/coco")  # expect: MA101
    return cfg


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


def is_main_process():
    return get_rank() == 0


def get_local_rank():
    return int(os.environ.get("LOCAL_RANK", 0))


def do_train(cfg, model, resume=False):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.SOLVER.BASE_LR)
    last = os.path.join(cfg.OUTPUT_DIR, "last_checkpoint")
    start_iter = 0
    if resume and os.path.exists(last):
        checkpoint = torch.load(last, map_location=torch.device("cpu"))
        model.load_state_dict(checkpoint["model"])
        start_iter = checkpoint["iteration"] + 1
    path = os.path.join(cfg.DATASETS.ROOT, "train.pt")
    data = torch.load(path) if os.path.exists(path) else (torch.randn(16, 8), torch.randint(0, 2, (16,)))
    dataset = TensorDataset(*data)
    sampler = DistributedSampler(dataset) if dist.is_initialized() else None  # expect: MA203
    loader = DataLoader(dataset, batch_size=cfg.SOLVER.IMS_PER_BATCH, sampler=sampler, shuffle=sampler is None)
    for iteration in range(start_iter, cfg.SOLVER.MAX_ITER):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            break
        if (iteration + 1) % cfg.SOLVER.CHECKPOINT_PERIOD == 0 and is_main_process():
            torch.save({"model": model.module.state_dict() if hasattr(model, "module") else model.state_dict(), "iteration": iteration}, last)  # expect: MA403


def main(args):
    cfg = get_cfg()
    if args.output_dir:
        cfg.OUTPUT_DIR = args.output_dir
    if is_main_process():
        os.makedirs(cfg.OUTPUT_DIR, exist_ok=True)
    torch.manual_seed(0)
    device = torch.device(cfg.MODEL.DEVICE if torch.cuda.is_available() else "cpu")  # expect: MA302
    model = torch.nn.Linear(8, 2).to(device)
    if dist.is_initialized() and dist.get_world_size() > 1:
        model = DistributedDataParallel(model, device_ids=[get_local_rank()] if device.type == "cuda" else None, broadcast_buffers=False)  # expect: MA310
    do_train(cfg, model, resume=args.resume)


def _distributed_worker(local_rank, main_func, world_size, num_gpus_per_machine, machine_rank, dist_url, args):
    global_rank = machine_rank * num_gpus_per_machine + local_rank
    backend = "NCCL" if torch.cuda.is_available() else "GLOO"  # expect: MA301, MA302
    dist.init_process_group(backend=backend, init_method=dist_url, world_size=world_size, rank=global_rank)  # expect: MA210
    if torch.cuda.is_available():  # expect: MA302
        torch.cuda.set_device(local_rank)  # expect: MA302
    main_func(*args)
    dist.destroy_process_group()


def launch(main_func, num_gpus_per_machine, num_machines=1, machine_rank=0, dist_url=None, args=()):
    world_size = num_machines * num_gpus_per_machine
    if world_size > 1:
        mp.spawn(_distributed_worker, nprocs=num_gpus_per_machine, args=(main_func, world_size, num_gpus_per_machine, machine_rank, dist_url, args), daemon=False)
    else:
        main_func(*args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--output-dir", default="")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--num-gpus", type=int, default=1)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:50152")  # expect: MA208
    args = parser.parse_args()  # expect: MA103, MA104
    launch(main, args.num_gpus, dist_url=args.dist_url, args=(args,))
