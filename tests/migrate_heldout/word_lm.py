"""pytorch/examples word_language_model style: --data names a corpus folder, --save names the
model file (opened with open(args.save, 'wb')), a positional folder for the logs."""
import argparse
import math
import os

import torch  # expect: MA305
import torch.nn as nn

parser = argparse.ArgumentParser(description="word-level language model")
parser.add_argument("logdir", nargs="?", default="lm_logs", help="where the perplexity log goes")  # expect: MA102 @positional
parser.add_argument("--data", type=str, default="./data/wikitext-2", help="location of the data corpus")  # expect: MA101
parser.add_argument("--model", type=str, default="LSTM", choices=["RNN_TANH", "RNN_RELU", "LSTM", "GRU"])  # clean: @false-alarm
parser.add_argument("--emsize", type=int, default=16)
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--cuda", action="store_true")
parser.add_argument("--save", type=str, default="model.pt", help="path to save the final model")  # expect: MA102 @opaque-name
args = parser.parse_args()  # expect: MA103, MA104

device = torch.device("cuda" if args.cuda else "cpu")  # expect: MA304


def tokenize(path):
    with open(path, encoding="utf8") as f:
        return [hash(w) % 64 for line in f for w in line.split() + ["<eos>"]]


train = torch.tensor(tokenize(os.path.join(args.data, "train.txt")), dtype=torch.long)
model = nn.Sequential(nn.Embedding(64, args.emsize), nn.Linear(args.emsize, 64)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
os.makedirs(args.logdir, exist_ok=True)
for epoch in range(args.epochs):
    optimizer.zero_grad()
    out = model(train[:-1].to(device))
    loss = nn.functional.cross_entropy(out, train[1:].to(device))
    loss.backward()
    optimizer.step()
    with open(os.path.join(args.logdir, "ppl.txt"), "a") as log:
        log.write(f"{epoch} {math.exp(loss.item()):.2f}\n")
with open(args.save, "wb") as f:
    torch.save(model, f)
