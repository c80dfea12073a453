"""ImageNet-style flags: ModelArts passes --world_size and --rank, the script declares dashes."""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument('--init-method', '--dist-url', default=None)
parser.add_argument("--rank", default=-1, type=int)
parser.add_argument("--data_url", default="./data")
parser.add_argument("--train_url", default="./out")
args, _ = parser.parse_known_args()
print(args.world_size, args.init_method, args.rank)
