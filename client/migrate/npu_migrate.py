#!/usr/bin/python3
"""npu migrate: what a PyTorch GPU training script changes on an Ascend NPU.

    npu migrate SCRIPT.py [SCRIPT.py ...] [--out DIR] [--ops docs/ops.md]

Reads each script with Python's ast (nothing is imported or run) and writes to
DIR a converted copy of each, change_list.csv (every change, line by line:
cuda -> npu device strings and calls, torch.cuda -> torch.npu, nccl -> hccl,
DataParallel -> DistributedDataParallel, amp and loss scaling, launch lines
with CPU affinity hints) and unsupported_op.csv (torch calls whose ONNX ops
the server cannot run, by the op list in docs/ops.md).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from npumigrate.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
