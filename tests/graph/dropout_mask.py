"""SeededDropout's mask as the op documents it (server/graph/ops/dropout_ops.cc),
written again in Python: the reference of the training tests."""
import numpy as np

M64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def fnv1a(s):
    h = 0xcbf29ce484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001b3) & M64
    return h


def dropout_mask(n, seed, node, ratio):
    stream = splitmix64((seed & M64) ^ fnv1a(node))
    return np.array([(splitmix64((stream + i) & M64) >> 40) * 2.0 ** -24 >= ratio for i in range(n)])
