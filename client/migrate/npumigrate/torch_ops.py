"""Which ONNX ops a torch call becomes when the model is exported
(torch.onnx.export, opsets 13-18), so that a script's calls can be checked
against the ops the server runs. Facts about torch's exporter, by name."""

_F = "torch.nn.functional."
_NN = "torch.nn."

# Fully qualified torch name -> the ONNX ops its export emits.
FUNCTIONS = {
    # torch.nn modules
    _NN + "Linear": ("Gemm",), _NN + "Bilinear": ("MatMul", "Add"),
    _NN + "Conv1d": ("Conv",), _NN + "Conv2d": ("Conv",), _NN + "Conv3d": ("Conv",),
    _NN + "ConvTranspose1d": ("ConvTranspose",), _NN + "ConvTranspose2d": ("ConvTranspose",),
    _NN + "ConvTranspose3d": ("ConvTranspose",),
    _NN + "BatchNorm1d": ("BatchNormalization",), _NN + "BatchNorm2d": ("BatchNormalization",),
    _NN + "BatchNorm3d": ("BatchNormalization",), _NN + "SyncBatchNorm": ("BatchNormalization",),
    _NN + "LayerNorm": ("LayerNormalization",), _NN + "GroupNorm": ("InstanceNormalization", "Reshape", "Mul", "Add"),
    _NN + "InstanceNorm1d": ("InstanceNormalization",), _NN + "InstanceNorm2d": ("InstanceNormalization",),
    _NN + "ReLU": ("Relu",), _NN + "ReLU6": ("Clip",), _NN + "LeakyReLU": ("LeakyRelu",), _NN + "PReLU": ("PRelu",),
    _NN + "ELU": ("Elu",), _NN + "SELU": ("Selu",), _NN + "CELU": ("Celu",), _NN + "GELU": ("Gelu",),
    _NN + "SiLU": ("Sigmoid", "Mul"), _NN + "Mish": ("Softplus", "Tanh", "Mul"), _NN + "Sigmoid": ("Sigmoid",),
    _NN + "Tanh": ("Tanh",), _NN + "Softmax": ("Softmax",), _NN + "LogSoftmax": ("LogSoftmax",),
    _NN + "Softplus": ("Softplus",), _NN + "Hardswish": ("HardSwish",), _NN + "Hardsigmoid": ("HardSigmoid",),
    _NN + "MaxPool1d": ("MaxPool",), _NN + "MaxPool2d": ("MaxPool",), _NN + "MaxPool3d": ("MaxPool",),
    _NN + "AvgPool1d": ("AveragePool",), _NN + "AvgPool2d": ("AveragePool",), _NN + "AvgPool3d": ("AveragePool",),
    _NN + "AdaptiveAvgPool2d": ("GlobalAveragePool",), _NN + "AdaptiveMaxPool2d": ("GlobalMaxPool",),
    _NN + "Dropout": ("Dropout",), _NN + "Dropout2d": ("Dropout",), _NN + "Embedding": ("Gather",),
    _NN + "Flatten": ("Flatten",), _NN + "Identity": ("Identity",), _NN + "Upsample": ("Resize",),
    _NN + "UpsamplingNearest2d": ("Resize",), _NN + "UpsamplingBilinear2d": ("Resize",),
    _NN + "PixelShuffle": ("DepthToSpace",), _NN + "ZeroPad2d": ("Pad",), _NN + "ConstantPad2d": ("Pad",),
    _NN + "ReflectionPad2d": ("Pad",), _NN + "ReplicationPad2d": ("Pad",),
    _NN + "LSTM": ("LSTM",), _NN + "GRU": ("GRU",), _NN + "RNN": ("RNN",),
    _NN + "MultiheadAttention": ("MatMul", "Softmax", "Transpose", "Reshape", "Add"),
    _NN + "TransformerEncoderLayer": ("MatMul", "Softmax", "Transpose", "Reshape", "Add", "LayerNormalization"),
    _NN + "CrossEntropyLoss": ("SoftmaxCrossEntropyLoss",), _NN + "NLLLoss": ("NegativeLogLikelihoodLoss",),
    _NN + "MSELoss": ("Sub", "Mul", "ReduceMean"), _NN + "L1Loss": ("Sub", "Abs", "ReduceMean"),
    _NN + "BCEWithLogitsLoss": ("Sigmoid", "Log", "Mul", "Sub", "Neg", "ReduceMean"),
    # torch.nn.functional
    _F + "relu": ("Relu",), _F + "relu6": ("Clip",), _F + "leaky_relu": ("LeakyRelu",), _F + "elu": ("Elu",),
    _F + "gelu": ("Gelu",), _F + "silu": ("Sigmoid", "Mul"), _F + "mish": ("Softplus", "Tanh", "Mul"),
    _F + "sigmoid": ("Sigmoid",), _F + "tanh": ("Tanh",), _F + "hardswish": ("HardSwish",),
    _F + "softmax": ("Softmax",), _F + "log_softmax": ("LogSoftmax",), _F + "softplus": ("Softplus",),
    _F + "linear": ("Gemm",), _F + "conv1d": ("Conv",), _F + "conv2d": ("Conv",), _F + "conv3d": ("Conv",),
    _F + "conv_transpose2d": ("ConvTranspose",), _F + "max_pool2d": ("MaxPool",), _F + "avg_pool2d": ("AveragePool",),
    _F + "adaptive_avg_pool2d": ("GlobalAveragePool",), _F + "layer_norm": ("LayerNormalization",),
    _F + "batch_norm": ("BatchNormalization",), _F + "group_norm": ("InstanceNormalization", "Reshape", "Mul", "Add"),
    _F + "dropout": ("Dropout",), _F + "embedding": ("Gather",), _F + "one_hot": ("OneHot",),
    _F + "interpolate": ("Resize",), _F + "upsample": ("Resize",), _F + "grid_sample": ("GridSample",),
    _F + "pad": ("Pad",), _F + "normalize": ("ReduceL2", "Div"), _F + "pixel_shuffle": ("DepthToSpace",),
    _F + "cross_entropy": ("SoftmaxCrossEntropyLoss",), _F + "nll_loss": ("NegativeLogLikelihoodLoss",),
    _F + "mse_loss": ("Sub", "Mul", "ReduceMean"), _F + "l1_loss": ("Sub", "Abs", "ReduceMean"),
    _F + "binary_cross_entropy_with_logits": ("Sigmoid", "Log", "Mul", "Sub", "Neg", "ReduceMean"),
    _F + "scaled_dot_product_attention": ("MatMul", "Softmax", "Mul", "Transpose"),
    # torch functions
    "torch.matmul": ("MatMul",), "torch.mm": ("MatMul",), "torch.bmm": ("MatMul",), "torch.addmm": ("Gemm",),
    "torch.einsum": ("Einsum",), "torch.add": ("Add",), "torch.sub": ("Sub",), "torch.mul": ("Mul",),
    "torch.div": ("Div",), "torch.exp": ("Exp",), "torch.log": ("Log",), "torch.sqrt": ("Sqrt",),
    "torch.rsqrt": ("Sqrt", "Reciprocal"), "torch.pow": ("Pow",), "torch.abs": ("Abs",), "torch.neg": ("Neg",),
    "torch.erf": ("Erf",), "torch.tanh": ("Tanh",), "torch.sigmoid": ("Sigmoid",), "torch.relu": ("Relu",),
    "torch.softmax": ("Softmax",), "torch.log_softmax": ("LogSoftmax",), "torch.sin": ("Sin",), "torch.cos": ("Cos",),
    "torch.floor": ("Floor",), "torch.ceil": ("Ceil",), "torch.round": ("Round",), "torch.sign": ("Sign",),
    "torch.cat": ("Concat",), "torch.concat": ("Concat",), "torch.stack": ("Unsqueeze", "Concat"),
    "torch.reshape": ("Reshape",), "torch.transpose": ("Transpose",), "torch.permute": ("Transpose",),
    "torch.flatten": ("Flatten",), "torch.squeeze": ("Squeeze",), "torch.unsqueeze": ("Unsqueeze",),
    "torch.split": ("Split",), "torch.chunk": ("Split",), "torch.gather": ("GatherElements",),
    "torch.index_select": ("Gather",), "torch.where": ("Where",), "torch.clamp": ("Clip",), "torch.clip": ("Clip",),
    "torch.max": ("ReduceMax",), "torch.min": ("ReduceMin",), "torch.amax": ("ReduceMax",),
    "torch.amin": ("ReduceMin",), "torch.argmax": ("ArgMax",), "torch.argmin": ("ArgMin",),
    "torch.sum": ("ReduceSum",), "torch.mean": ("ReduceMean",), "torch.prod": ("ReduceProd",),
    "torch.norm": ("ReduceL2",), "torch.cumsum": ("CumSum",), "torch.topk": ("TopK",), "torch.sort": ("TopK",),
    "torch.argsort": ("TopK",), "torch.nonzero": ("NonZero",), "torch.masked_select": ("NonZero", "GatherND"),
    "torch.scatter": ("ScatterElements",), "torch.scatter_add": ("ScatterElements",), "torch.tile": ("Tile",),
    "torch.roll": ("Slice", "Concat"), "torch.flip": ("Slice",), "torch.tril": ("Trilu",), "torch.triu": ("Trilu",),
    "torch.arange": ("Range",), "torch.zeros_like": ("ConstantOfShape",), "torch.ones_like": ("ConstantOfShape",),
    "torch.full_like": ("ConstantOfShape",), "torch.rand_like": ("RandomUniformLike",),
    "torch.randn_like": ("RandomNormalLike",), "torch.multinomial": ("Multinomial",),
    "torch.bernoulli": ("Bernoulli",), "torch.isnan": ("IsNaN",), "torch.isinf": ("IsInf",),
    "torch.logical_and": ("And",), "torch.logical_or": ("Or",), "torch.logical_not": ("Not",),
    "torch.eq": ("Equal",), "torch.gt": ("Greater",), "torch.lt": ("Less",), "torch.ge": ("GreaterOrEqual",),
    "torch.le": ("LessOrEqual",), "torch.remainder": ("Mod",), "torch.fmod": ("Mod",),
    "torch.fft.fft": ("DFT",), "torch.fft.rfft": ("DFT",), "torch.fft.ifft": ("DFT",), "torch.stft": ("STFT",),
}

# Tensor methods worth a look when called on anything but `self` (x.cumsum(1)).
# Names that Python's own types have (sort, split, index, count, copy, ...) or
# that modules' attributes often take (norm, ...) are left out.
METHODS = {
    "cumsum": ("CumSum",), "topk": ("TopK",), "argsort": ("TopK",), "nonzero": ("NonZero",),
    "masked_select": ("NonZero", "GatherND"), "scatter": ("ScatterElements",), "scatter_": ("ScatterElements",),
    "scatter_add": ("ScatterElements",), "scatter_add_": ("ScatterElements",), "index_add": ("ScatterND",),
    "index_add_": ("ScatterND",), "index_put_": ("ScatterND",), "masked_scatter_": ("NonZero", "ScatterND"),
    "tril": ("Trilu",), "triu": ("Trilu",), "roll": ("Slice", "Concat"), "unfold": ("Unfold",),
    "masked_fill": ("Where",), "masked_fill_": ("Where",), "index_select": ("Gather",), "gather": ("GatherElements",),
    "bernoulli_": ("Bernoulli",), "multinomial": ("Multinomial",),
}

# Losses: part of an exported graph only when training on the device.
LOSSES = {_NN + "CrossEntropyLoss", _NN + "NLLLoss", _F + "cross_entropy", _F + "nll_loss"}

# Ops the server has, with limits a call can run into.
LIMITS = {
    _NN + "Conv1d": "the server's Conv is 2-D (NCHW): reshape to N,C,1,L and use Conv2d",
    _NN + "Conv3d": "the server's Conv is 2-D (NCHW)",
    _NN + "MaxPool1d": "the server's pooling is 2-D (NCHW)", _NN + "MaxPool3d": "the server's pooling is 2-D (NCHW)",
    _NN + "AvgPool1d": "the server's pooling is 2-D (NCHW)", _NN + "AvgPool3d": "the server's pooling is 2-D (NCHW)",
    _F + "conv1d": "the server's Conv is 2-D (NCHW)", _F + "conv3d": "the server's Conv is 2-D (NCHW)",
}
