"""Every rule on a small synthetic script: it fires where it should, with the right fixability,
and stays quiet on the look-alikes that are fine."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from majob.migrate import rewrite
from majob.migrate.checker import check_source
from majob.migrate.rules import RULES, Codemod, Severity, Target

GPU, NPU = Target.GPU, Target.NPU
NPU_FIX = {Codemod.NPU_AUTO, Codemod.NPU_MANUAL}

PARSER = """
import argparse
import os
import torch
parser = argparse.ArgumentParser()
args = parser.parse_known_args()[0]
"""

DIST = (
    "import os\nimport torch\nimport torch.distributed as dist\n"
    "dist.init_process_group('gloo', init_method=a.init_method, rank=a.rank, world_size=a.world_size)\n"
)

# (rule, target, source, fixed by) -- the finding must be reported exactly with these codemods.
FIRES: list[tuple[str, Target, str, set[Codemod]]] = [
    ("MA000", GPU, "def broken(:\n    pass\n", set()),
    ("MA101", GPU, PARSER + "x = torch.load('./data/x.pt')\n", {Codemod.CLOUD_PATHS}),
    ("MA101", GPU, "import numpy as np\nnp.load('/data/x.npy')\n", set()),  # no parser
    ("MA102", GPU, PARSER + "torch.save(1, '/ckpt/m.pt')\n", {Codemod.CLOUD_PATHS}),
    ("MA102", GPU, PARSER + "open('log.txt', 'a').write('x')\n", {Codemod.CLOUD_PATHS}),
    # a folder constant used as a path of its own is still one
    (
        "MA102",
        GPU,
        PARSER + "CKPT_FOLDER = 'ckpt'\nos.makedirs(CKPT_FOLDER)\ntorch.save(1, CKPT_FOLDER)\n",
        {Codemod.CLOUD_PATHS},
    ),
    (
        "MA103",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\na = p.parse_args()\n",
        set(),  # nothing would read the argument: it is not added
    ),
    (
        "MA104",
        GPU,
        "import argparse\ndef f(p):\n    return p.parse_args()\n",
        {Codemod.CLOUD_PATHS},
    ),
    ("MA105", GPU, PARSER + "torch.save(1, os.path.join(args.data_url, 'm.pt'))\n", set()),
    (
        "MA108",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--model_name_or_path', default='bert-base-uncased')\n"
        "a = p.parse_args()\n",
        {Codemod.CLOUD_PATHS},
    ),
    (
        "MA201",
        GPU,
        PARSER + "import torch.nn as nn\nm = nn.DataParallel(nn.Linear(1, 1))\n",
        {Codemod.DDP},
    ),
    ("MA201", GPU, "import torch\ny = torch.nn.parallel.data_parallel(m, x)\n", set()),
    (
        "MA202",
        GPU,
        """
import torch.distributed as dist
from torch.utils.data import DataLoader
dist.init_process_group('gloo')
loader = DataLoader(ds, batch_size=4, shuffle=True)
""",
        {Codemod.DDP},
    ),
    (
        "MA203",
        GPU,
        """
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds)
loader = DataLoader(ds, sampler=sampler)
for epoch in range(3):
    for b in loader:
        pass
""",
        {Codemod.DDP},
    ),
    (
        "MA204",
        GPU,
        """
import torch
import torch.distributed as dist
dist.init_process_group('gloo')
torch.save(model.state_dict(), 'm.pt')
""",
        {Codemod.DDP},
    ),
    (
        "MA205",
        GPU,
        """
import torch
from torch.nn.parallel import DistributedDataParallel
model = DistributedDataParallel(net)
if rank == 0:
    torch.save(model.state_dict(), 'm.pt')
""",
        {Codemod.DDP},
    ),
    (
        "MA206",
        GPU,
        """
import torch
import torch.distributed as dist
dist.init_process_group('gloo')
if args.local_rank == 0:
    torch.save(model.module.state_dict(), 'm.pt')
""",
        set(),
    ),
    ("MA207", GPU, "import os\nos.environ['MASTER_ADDR'] = '10.0.0.1'\n", set()),
    ("MA207", GPU, "import os\nos.environ.setdefault('MASTER_PORT', '29500')\n", set()),
    ("MA208", GPU, "url = 'tcp://10.0.0.1:23456'\n", set()),
    ("MA208", GPU, "url = f'tcp://{host}:23456'\n", set()),
    ("MA209", GPU, "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\n", set()),
    (
        "MA301",
        NPU,
        "import torch_npu\nimport torch.distributed as d\nd.init_process_group('nccl')\n",
        {Codemod.NPU_AUTO, Codemod.NPU_MANUAL},
    ),
    (
        "MA302",
        NPU,
        "import torch_npu\nimport torch\ntorch.cuda.manual_seed(0)\n",
        {Codemod.NPU_AUTO, Codemod.NPU_MANUAL},
    ),
    (
        "MA302",
        NPU,
        "import torch_npu\nfrom torch.cuda.amp import autocast\n",
        {Codemod.NPU_AUTO, Codemod.NPU_MANUAL},
    ),
    ("MA303", NPU, "import torch_npu\nx = y.cuda()\n", {Codemod.NPU_AUTO, Codemod.NPU_MANUAL}),
    (
        "MA304",
        NPU,
        "import torch_npu\nimport torch\nd = torch.device('cuda:1')\n",
        {Codemod.NPU_AUTO, Codemod.NPU_MANUAL},
    ),
    (
        "MA304",
        NPU,
        "import torch_npu\nd = f'cuda:{rank}'\n",
        {Codemod.NPU_AUTO, Codemod.NPU_MANUAL},
    ),
    ("MA305", NPU, "import torch\n", {Codemod.NPU_AUTO, Codemod.NPU_MANUAL}),
    ("MA306", NPU, "import torch_npu\nok = x.is_cuda\n", {Codemod.NPU_AUTO, Codemod.NPU_MANUAL}),
    ("MA310", NPU, "import torch_npu\nif dev.type == 'cuda':\n    pass\n", {Codemod.NPU_MANUAL}),
    ("MA311", NPU, "import torch_npu\nimport torch\ntorch.cuda.nvtx.range_push('a')\n", set()),
    (
        "MA311",
        NPU,
        "import torch_npu\nimport torch\nwith torch.backends.cuda.sdp_kernel():\n  pass\n",
        set(),
    ),
    ("MA312", NPU, "import torch_npu\nif backend == 'nccl':\n    pass\n", {Codemod.NPU_MANUAL}),
    (
        "MA320",
        NPU,
        "from torch.utils.cpp_extension import load\nops = load('ops', ['k.cu'])\n",
        set(),
    ),
    ("MA321", NPU, "from apex.optimizers import FusedAdam\nopt = FusedAdam(params)\n", set()),
    ("MA321", NPU, "import amp_C\n", set()),
    ("MA322", NPU, "import triton\n", set()),
    ("MA323", NPU, "import cupy as cp\n", set()),
    ("MA323", NPU, "from numba import cuda\n", set()),
    ("MA324", NPU, "import torch\n@torch.jit.script\ndef f(x):\n    return x\n", set()),
    ("MA325", NPU, "import torch\nx = x.to(memory_format=torch.channels_last)\n", set()),
    ("MA326", NPU, "import torch\nx = torch.zeros(2, dtype=torch.float64)\n", set()),
    ("MA326", NPU, "y = x.double()\n", set()),
    ("MA327", NPU, "from apex import amp\n", set()),
    ("MA304", NPU, "import torch_npu\nd = 'cuda:{}'.format(gpu)\n", NPU_FIX),
    ("MA304", NPU, "import torch_npu\nd = 'cuda:%d' % gpu\n", NPU_FIX),
    ("MA304", NPU, "import torch_npu\nd = 'cuda:' + str(gpu)\n", NPU_FIX),
    ("MA101", GPU, PARSER + "parser.add_argument('--data', default='./imagenet')\n", set()),
    (
        "MA102",
        GPU,
        "import torch\ndef save(s, filename='ckpt.pth.tar'):\n    torch.save(s, filename)\n",
        set(),
    ),
    ("MA102", GPU, "import shutil\nshutil.copyfile(f, 'model_best.pth.tar')\n", set()),
    ("MA101", GPU, "import numpy as np\nd = np.memmap('train.bin', mode='r')\n", set()),
    ("MA101", GPU, "print(open('data/labels.txt').read())\n", set()),  # a use inside print
    (
        "MA208",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--dist-url', default='tcp://224.66.41.62:23456')\n",
        {Codemod.CLOUD_PATHS},  # the flag gets the --init_method spelling
    ),
    ("MA327", NPU, "import apex\nm = apex.parallel.DistributedDataParallel(m)\n", set()),
    # ModelArts passes --world_size; argparse does not match it to a declared --world-size
    (
        "MA106",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--world-size', type=int)\n"
        "a, _ = p.parse_known_args()\n",
        {Codemod.CLOUD_PATHS},
    ),
    # the group reads the launcher's environment (env://), or no --world_size reaches it
    ("MA210", GPU, "import torch.distributed as dist\ndist.init_process_group('nccl')\n", set()),
    (
        "MA210",
        GPU,
        "import torch.distributed as dist\ndist.init_process_group('gloo', init_method='env://')\n",
        set(),
    ),
    (
        "MA210",
        GPU,
        "import argparse\nimport torch.distributed as dist\np = argparse.ArgumentParser()\n"
        "p.add_argument('--dist-url')\na, _ = p.parse_known_args()\n"
        "dist.init_process_group('gloo', init_method=a.dist_url, rank=0, world_size=2)\n",
        set(),
    ),
    # guards: an `or` that lets every rank through; rank % devices and LOCAL_RANK are per node
    (
        "MA204",
        GPU,
        DIST + "if not a.multiprocessing_distributed or a.rank % n == 0:\n"
        "    torch.save(m, '/o/m.pt')\n",
        {Codemod.DDP},
    ),
    (
        "MA206",
        GPU,
        DIST + "if a.rank % ngpus_per_node == 0:\n    torch.save(m, '/o/m.pt')\n",
        set(),
    ),
    (
        "MA206",
        GPU,
        DIST + "if int(os.environ['LOCAL_RANK']) == 0:\n    torch.save(m, '/o/m.pt')\n",
        set(),
    ),
    # paths in config objects, pathlib, and a writer's implicit directory
    ("MA102", GPU, "cfg.OUTPUT_DIR = './output'\n", set()),
    ("MA102", GPU, "from pathlib import Path\nPath('faults.json').write_text('{}')\n", set()),
    ("MA102", GPU, "t = TrainingArguments(output_dir='./results', logging_dir='./logs')\n", set()),
    ("MA101", GPU, "cfg = SimpleNamespace(DATA_ROOT='datasets/coco')\n", set()),
    (
        "MA102",
        GPU,
        "import torch\nfrom pathlib import Path\nCKPT_DIR = Path('checkpoints')\n"
        "torch.save(m, CKPT_DIR / 'm.pt')\n",
        set(),
    ),
    (
        "MA102",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--project', default=ROOT / 'runs/train')\n",
        set(),
    ),
    (
        "MA102",
        GPU,
        "from torch.utils.tensorboard import SummaryWriter\nw = SummaryWriter()\n",
        set(),
    ),
    # a literal handed to a local function whose parameter becomes a path (timm's get_outdir)
    (
        "MA102",
        GPU,
        "import os\ndef get_outdir(path, *paths):\n    outdir = os.path.join(path, *paths)\n"
        "    os.makedirs(outdir, exist_ok=True)\n    return outdir\n"
        "d = get_outdir(a.output if a.output else './output/train', 'exp')\n",
        set(),
    ),
    (
        "MA101",
        GPU,
        "import numpy as np\nclass Data:\n    def read(self, root):\n        return np.load(root)\n"
        "x = Data().read('data/train.npy')\n",
        set(),
    ),
    # False on Ascend, with or without transfer_to_npu: the script would pick gloo
    (
        "MA313",
        NPU,
        "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n"
        "import torch.distributed as dist\nb = 'hccl' if dist.is_nccl_available() else 'gloo'\n",
        {Codemod.NPU_MANUAL},
    ),
    # formatted paths that start with a directory, and literals made into a pathlib.Path
    ("MA102", GPU, PARSER + "torch.save(m, f'checkpoints/epoch_{e}.pt')\n", {Codemod.CLOUD_PATHS}),
    ("MA102", GPU, PARSER + "torch.save(m, 'ckpt/epoch_%d.pt' % e)\n", {Codemod.CLOUD_PATHS}),
    ("MA102", GPU, PARSER + "torch.save(m, 'ckpt/e_{}.pt'.format(e))\n", {Codemod.CLOUD_PATHS}),
    ("MA102", GPU, PARSER + "torch.save(m, 'ckpt/' + name + '.pt')\n", {Codemod.CLOUD_PATHS}),
    (
        "MA102",
        GPU,
        PARSER + "from pathlib import Path\nd = Path('runs') / 'exp'\n",
        {Codemod.CLOUD_PATHS},
    ),
    # YOLOv5's parse_opt returns the parsed arguments
    (
        "MA103",
        GPU,
        "import argparse\ndef parse_opt():\n    p = argparse.ArgumentParser()\n"
        "    return p.parse_known_args()[0]\n",
        set(),  # nothing would read the arguments: they are not added
    ),
    (
        "MA107",
        GPU,
        "from pytorch_lightning.cli import LightningCLI\ncli = LightningCLI(M)\n",
        set(),
    ),
    ("MA107", GPU, "exec(open('configurator.py').read())\n", set()),
    (
        "MA107",
        GPU,
        "import hydra\n@hydra.main(config_name='cfg')\ndef main(cfg):\n    pass\n",
        set(),
    ),
    ("MA107", GPU, "(a,) = parser.parse_args_into_dataclasses()\n", set()),
    ("MA211", GPU, "import os\nrank = int(os.environ['LOCAL_RANK'])\n", set()),
    ("MA211", GPU, "from accelerate import Accelerator\naccelerator = Accelerator()\n", set()),
    (
        "MA212",
        GPU,
        PARSER + "import torch.nn as nn\nm = nn.DataParallel(nn.Linear(1, 1)).cuda()\n",
        set(),
    ),
    ("MA307", NPU, "import torch\nm = torch.nn.Linear(1, 1).to(local_rank)\n", NPU_FIX),
    ("MA328", NPU, "import torch\nm = torch.compile(torch.nn.Linear(1, 1))\n", set()),
    (
        "MA102",
        GPU,
        PARSER
        + "from torchvision.utils import save_image\nsave_image(x, 'results/s_' + str(e) + '.png')\n",
        {Codemod.CLOUD_PATHS},
    ),
    (
        "MA101",
        GPU,
        PARSER + "parser.add_argument('--style-image', default='images/mosaic.jpg')\n",
        set(),
    ),
    (
        "MA401",
        GPU,
        PARSER + "for epoch in range(3):\n"
        "    torch.save({'epoch': epoch, 'model': m.state_dict(), 'optimizer': o.state_dict()},"
        " os.path.join(args.train_url, 'ckpt', 'last.pt'))\n",
        {Codemod.RESUME},
    ),
    (
        "MA401",
        GPU,
        PARSER + "for epoch in range(3):\n"
        "    torch.save(m.state_dict(), os.path.join(args.train_url, 'last.pt'))\n",
        set(),  # no epoch and no optimizer state in the checkpoint: by hand
    ),
    (
        "MA402",
        GPU,
        "# checkpoints: train_url/ckpt/\n"
        + PARSER
        + "for epoch in range(3):\n    torch.save(m, os.path.join(args.train_url, 'm.pt'))\n",
        set(),
    ),
    (
        "MA403",
        GPU,
        PARSER + "def save(m, path):\n    torch.save(m, path)\n"
        "for epoch in range(3):\n    save(m, 'ckpt.pt')\n",
        {Codemod.RESUME},
    ),
]

# (rule, target, source): the rule must stay quiet.
QUIET: list[tuple[str, Target, str]] = [
    # optparse's parse_args returns (options, args) and has no parse_known_args
    ("MA104", GPU, "import optparse\np = optparse.OptionParser()\n(o, a) = p.parse_args()\n"),
    # a dataset name among choices, code run by exec, a hub id: no paths
    ("MA101", GPU, PARSER + "parser.add_argument('--dataset', default='cifar10', choices=['a'])\n"),
    ("MA101", GPU, "exec(open('configurator.py').read())\n"),
    (
        "MA101",
        GPU,
        "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert-base')\n",
    ),
    # LOCAL_RANK read under a test of the launch
    (
        "MA211",
        GPU,
        "import os\nif 'LOCAL_RANK' in os.environ:\n    r = int(os.environ['LOCAL_RANK'])\n",
    ),
    (
        "MA211",
        GPU,
        "import os\nddp = 'RANK' in os.environ\nif ddp:\n    r = int(os.environ['RANK'])\n",
    ),
    ("MA307", NPU, "import torch\nm = torch.nn.Linear(1, 1).to(device)\n"),
    ("MA101", GPU, "from pathlib import Path\nPath('faults.json').write_text('{}')\n"),  # MA102
    ("MA101", GPU, "import os\nstat = open(f'/proc/{os.getpid()}/stat').read()\n"),
    # one finding for one path: the Path call's, not also a joined constant's MA102
    (
        "MA102",
        GPU,
        "from pathlib import Path\nRUNS_DIR = Path('.majob') / 'runs'\nprint(RUNS_DIR)\n",
    ),
    # keywords that are no config paths: a route pattern, a bare path= or file= name
    ("MA101", GPU, "r = route(path='^/bkt/f$')\nj = Job(boot_file='train.py', path='/v2/jobs')\n"),
    ("MA101", GPU, "self.path = '/v2/p1/training-jobs'\n"),
    ("MA102", GPU, PARSER + "torch.save(m, f'{args.out}/epoch_{e}.pt')\n"),  # no literal dir
    (
        "MA101",
        GPU,
        "from pathlib import Path\nprint(Path('data') / 'x')\nfiles = Path('.').glob('*')\n",
    ),
    ("MA313", GPU, "import torch.distributed as dist\nok = dist.is_nccl_available()\n"),
    # a map_location key names where the checkpoint was saved: 'cuda:0' stays
    (
        "MA304",
        NPU,
        "import torch\nimport torch_npu\ns = torch.load(p, map_location={'cuda:0': 'cpu'})\n",
    ),
    # the saver exists on rank 0 only, so its method saves on rank 0 only
    (
        "MA204",
        GPU,
        DIST + "class Saver:\n    def save_checkpoint(self, m):\n        torch.save(m, 'm.pt')\n"
        "saver = None\nif dist.get_rank() == 0:\n    saver = Saver()\n"
        "if saver is not None:\n    saver.save_checkpoint(1)\n",
    ),
    # a local function's parameter that is not a path: its literals are not paths
    ("MA102", GPU, "def greet(name):\n    print(name)\ngreet('out/x')\n"),
    (
        "MA204",
        GPU,
        DIST + "if not dist.is_initialized() or dist.get_rank() == 0:\n    torch.save(m, 'm')\n",
    ),
    (
        "MA205",
        GPU,
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(m)\n"
        "torch.save(m.module.state_dict() if hasattr(m, 'module') else m.state_dict(), 'm.pt')\n",
    ),
    (
        "MA106",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--world-size', '--world_size')\n",
    ),
    (
        "MA210",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--world_size')\n" + DIST,
    ),
    (
        "MA102",
        GPU,
        "from torch.utils.tensorboard import SummaryWriter\nw = SummaryWriter(args.train_url)\n",
    ),
    ("MA102", GPU, "OUT_DIR = './out'\nprint(OUT_DIR)\n"),
    (
        "MA204",
        GPU,
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('gloo')\n"
        "def save(m):\n    torch.save(m, '/o/m.pt')\nif dist.get_rank() == 0:\n    save(1)\n",
    ),
    ("MA101", GPU, "import torch\ntorch.load(path)\n"),
    ("MA101", GPU, "import torch\ntorch.load('obs://bucket/x.pt')\n"),
    ("MA104", GPU, "import argparse\np = argparse.ArgumentParser()\na, _ = p.parse_known_args()\n"),
    ("MA203", GPU, "for epoch in range(3):\n    pass\n"),  # no sampler at all: no false alarm
    (
        "MA203",
        GPU,
        """
from torch.utils.data import DistributedSampler
s = DistributedSampler(ds)
def train(epoch):
    s.set_epoch(epoch)
for epoch in range(3):
    train(epoch)
""",
    ),
    ("MA204", GPU, "import torch\ntorch.save(m, 'm.pt')\n"),  # not distributed
    (
        "MA204",
        GPU,
        """
import torch
import torch.distributed as dist
dist.init_process_group('gloo')
def main():
    if dist.get_rank() != 0:
        return
    torch.save(m, 'm.pt')
""",
    ),
    (
        "MA204",
        GPU,
        """
import torch
import torch.distributed as dist
dist.init_process_group('gloo')
def save_on_master(obj, path):
    torch.save(obj, path)
""",
    ),
    ("MA205", GPU, "import torch\ntorch.save(model.state_dict(), 'm.pt')\n"),
    (
        "MA208",
        GPU,
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--init_method', default='tcp://127.0.0.1:6666')\n",
    ),
    ("MA302", GPU, "import torch\ntorch.cuda.synchronize()\n"),  # GPU target: fine
    (
        "MA302",
        NPU,
        "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\nimport torch\n"
        "torch.cuda.synchronize()\n",
    ),
    (
        "MA303",
        NPU,
        "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\nx = y.cuda()\n",
    ),
    ("MA304", NPU, "import torch_npu\nprint('use cuda when you can')\n"),
    ("MA305", NPU, "import numpy\n"),
    ("MA305", NPU, "import torch\nimport torch_npu\n"),
    # a final model saved after training is no checkpoint to resume from
    ("MA401", GPU, PARSER + "for epoch in range(3):\n    pass\ntorch.save(m, 'final.pt')\n"),
    ("MA403", GPU, PARSER + "for epoch in range(3):\n    pass\ntorch.save(m, 'final.pt')\n"),
    # model.train() in the loop is torch's, not the file's train() that saves the final model
    (
        "MA403",
        GPU,
        PARSER + "def train(m):\n    for epoch in range(3):\n        m.train()\n"
        "    torch.save(m, 'final.pt')\n",
    ),
    # a script that loads its checkpoint back resumes
    (
        "MA401",
        GPU,
        PARSER + "m.load_state_dict(torch.load('c.pt'))\n"
        "for epoch in range(3):\n    torch.save(m.state_dict(), 'c.pt')\n",
    ),
    # saved to a temporary name, then renamed: atomic
    (
        "MA403",
        GPU,
        PARSER + "for epoch in range(3):\n"
        "    torch.save(m, p + '.tmp')\n    os.replace(p + '.tmp', p)\n",
    ),
    (
        "MA403",
        GPU,
        PARSER + "for epoch in range(3):\n    torch.save(m, p)\n    os.replace(p, q)\n",
    ),
    # a folder's name joined under the output argument is not a path of its own
    (
        "MA102",
        GPU,
        PARSER + "CKPT_FOLDER = 'ckpt'\n"
        "torch.save(1, os.path.join(args.train_url, CKPT_FOLDER, 'm.pt'))\n",
    ),
    # under the spec's folder, or no spec given
    (
        "MA402",
        GPU,
        "# checkpoints: train_url/ckpt/\n" + PARSER + "for epoch in range(3):\n"
        "    torch.save(m, os.path.join(args.train_url, 'ckpt', 'm.pt'))\n",
    ),
    (
        "MA402",
        GPU,
        PARSER + "for epoch in range(3):\n    torch.save(m, os.path.join(args.out, 'm.pt'))\n",
    ),
]


def _findings(rule: str, target: Target, source: str) -> list[tuple[str, set[Codemod]]]:
    # a case that starts `# checkpoints: train_url/ckpt/` is checked as with such a spec
    checkpoints = ("train_url", "ckpt") if source.startswith("# checkpoints:") else None
    report = check_source(textwrap.dedent(source), "case.py", target, checkpoints=checkpoints)
    return [(f.rule, set(f.fixed_by)) for f in report.findings if f.rule == rule]


@pytest.mark.parametrize(("rule", "target", "source", "fixed_by"), FIRES)
def test_rule_fires(rule: str, target: Target, source: str, fixed_by: set[Codemod]) -> None:
    found = _findings(rule, target, source)
    assert found, f"{rule} did not fire"
    assert found[0][1] == fixed_by


@pytest.mark.parametrize(("rule", "target", "source"), QUIET)
def test_rule_stays_quiet(rule: str, target: Target, source: str) -> None:
    assert _findings(rule, target, source) == []


def test_every_rule_has_a_case() -> None:
    assert {case[0] for case in FIRES} == set(RULES)


def test_findings_carry_location_and_hint() -> None:
    report = check_source("import os\nx = 1\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n", "t.py")
    (finding,) = report.findings
    assert (finding.path, finding.line, finding.col, finding.rule) == ("t.py", 3, 1, "MA209")
    assert finding.severity is Severity.WARNING
    assert "ASCEND_RT_VISIBLE_DEVICES" in finding.hint
    assert not finding.fixable


def test_columns_count_characters_not_bytes() -> None:
    report = check_source("import os\ns = 'ü'; os.environ['MASTER_ADDR'] = 'h'\n", "t.py")
    assert [(f.rule, f.col) for f in report.findings] == [("MA207", 10)]  # 11 if bytes


def test_data_parallel_is_an_error_on_npu_only() -> None:
    source = "import torch\nm = torch.nn.DataParallel(net)\n"
    severity = {
        t: next(f.severity for f in check_source(source, "t.py", t).findings if f.rule == "MA201")
        for t in Target
    }
    assert severity == {GPU: Severity.WARNING, NPU: Severity.ERROR}


def test_unparsable_file_is_one_finding_and_skipped() -> None:
    report = check_source("x = (\n", "bad.py")
    assert not report.parsed
    assert [(f.rule, f.severity) for f in report.findings] == [("MA000", Severity.ERROR)]
    assert report.fixes == []


def _ma305(source: str, version: tuple[int, int] | None = None) -> list[Severity]:
    report = check_source(source, "case.py", NPU, version)
    return [f.severity for f in report.findings if f.rule == "MA305"]


def test_missing_torch_npu_import_depends_on_the_code_and_the_torch_version() -> None:
    cuda = "import torch\nx = torch.zeros(2).cuda()\n"
    assert _ma305(cuda) == [Severity.ERROR]
    assert _ma305(cuda, (2, 1)) == [Severity.ERROR]
    assert _ma305(cuda, (2, 5)) == [Severity.NOTE]  # torch_npu loads itself from torch 2.5
    assert _ma305("import torch\nx = torch.zeros(2)\n") == [Severity.NOTE]  # device-agnostic


def test_python2_async_is_reported_with_its_fix_and_the_rest_is_checked() -> None:
    source = "import torch\nx = torch.zeros(1).cuda(async=True)\ntorch.save(x, 'x.pt')\n"
    report = check_source(source, "old.py", NPU)
    rules = [(f.line, f.rule) for f in report.findings]
    assert (2, "MA000") in rules and (2, "MA303") in rules  # the line is checked too
    assert report.repaired_source is not None
    assert "cuda(non_blocking=True)" in report.repaired_source
    ma000 = next(f for f in report.findings if f.rule == "MA000")
    assert set(ma000.fixed_by) == set(Codemod) and "non_blocking=True" in ma000.message


def test_only_async_keywords_in_code_are_read_as_placeholders() -> None:
    """Strings and comments that spell ``async=`` stay as they are; a keyword split over lines,
    after a CRLF line or behind a raw string's escaped quote is still found."""
    source = (
        "import torch\n"
        "s = 'x.cuda(async=True)'  # cuda(async=True)\r\n"
        'doc = """\nasync=1\n"""\n'
        "raw = r'\\'async=1'\n"
        "x = torch.zeros(1).cuda(\n    async\n    =True)\n"
        'y = f"{doc}async="; z = torch.zeros(1).cuda(async = True)\n'
    )
    report = check_source(source, "old.py", NPU)
    places = [(f.line, f.col) for f in report.findings if f.rule == "MA000" and f.fixable]
    assert places == [(8, 5), (10, 45)]
    assert report.repaired_source is not None
    assert report.repaired_source.count("non_blocking") == 2
    assert "'x.cuda(async=True)'  # cuda(async=True)" in report.repaired_source
    assert "\nasync=1\n" in report.repaired_source
    compared = check_source("same = async == 1\n", "old.py", NPU)  # a comparison: no keyword
    assert [(f.rule, f.fixable) for f in compared.findings] == [("MA000", False)]


def test_a_python2_print_is_reported_the_rest_is_checked_and_its_call_is_the_fix() -> None:
    source = 'print "epoch %d" % 1, 2  # note\nimport torch\nx = torch.zeros(1).cuda()\n'
    report = check_source(source, "p.py", NPU)
    assert [(f.line, f.rule) for f in report.findings if f.rule in ("MA000", "MA303")] == [
        (1, "MA000"),
        (3, "MA303"),
    ]
    assert report.repaired_source is not None
    assert report.repaired_source.startswith('print("epoch %d" % 1, 2)  # note\n')


@pytest.mark.parametrize("line", ["print x,", "print x, (\n    y)"])
def test_a_print_a_call_spells_differently_is_fixed_by_hand(line: str) -> None:
    """``print x,`` keeps the line open (a call needs end=" "); a statement that goes on past
    its line is not rewritten line by line."""
    report = check_source(f"import torch\n{line}\n", "p.py", NPU)
    assert "MA000" in {f.rule for f in report.findings}
    assert report.repaired_source is None


def test_migrate_names_the_error_it_cannot_repair_when_it_skips_a_file(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text("import torch\nx = torch.zeros(1).cuda(async=True)\nprint x,\n", "utf-8")
    result = rewrite.plan([script], Codemod.NPU_MANUAL, jobs=1)
    assert len(result.skipped) == 1 and "old.py:3:" in result.skipped[0]
    assert "print" in result.skipped[0]


def test_apex_is_one_finding_per_import_line() -> None:
    report = check_source("from apex import amp\nfrom apex.parallel import DDP\n", "a.py", NPU)
    assert [(f.line, f.rule) for f in report.findings if f.rule == "MA327"] == [
        (1, "MA327"),
        (2, "MA327"),
    ]


def test_missing_torch_npu_is_a_note_beside_accelerate_or_torch_accelerator() -> None:
    cuda = "\nx = torch.zeros(1).cuda()\n"
    assert _ma305("import torch\nimport accelerate" + cuda) == [Severity.NOTE]
    assert _ma305("import torch\nd = torch.accelerator.current_accelerator()" + cuda) == [
        Severity.NOTE
    ]
