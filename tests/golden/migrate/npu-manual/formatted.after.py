import torch
import torch_npu

device = torch.device("npu:{}".format(args.gpu))
other = "npu:%d" % args.gpu
third = "npu:" + str(args.gpu)
state = torch.load("ckpt.pt", map_location="npu:{}".format(args.gpu))
