"""nanoGPT style config: globals, then an exec'd configurator that rejects any argument it does
not know (the --data_url ModelArts adds), a data folder joined from the dataset name."""
import os

import numpy as np
import torch  # expect: MA305

out_dir = "out-small"  # expect: MA102
dataset = "openwebtext"  # clean: @false-alarm
eval_interval = 10
device = "cuda"  # expect: MA304
config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, float, bool, str))]
exec(open("configurator.py").read())  # expect: MA107 @framework
config = {k: globals()[k] for k in config_keys}
data_dir = os.path.join("data", dataset)  # expect: MA101
train_data = np.memmap(os.path.join(data_dir, "train.bin"), dtype=np.uint16, mode="r")
model = torch.nn.Linear(8, 8).to(device)
os.makedirs(out_dir, exist_ok=True)
torch.save({"model": model.state_dict(), "config": config}, os.path.join(out_dir, "ckpt.pt"))
