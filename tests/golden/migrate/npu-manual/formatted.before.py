import torch

device = torch.device("cuda:{}".format(args.gpu))
other = "cuda:%d" % args.gpu
third = "cuda:" + str(args.gpu)
state = torch.load("ckpt.pt", map_location="cuda:{}".format(args.gpu))
