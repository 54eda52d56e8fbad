"""ONNX's LSTM and GRU (opset 14, layout 0) in float64 torch ops, written from
the spec: gate orders i, o, f, c and z, r, h; directions forward, reverse and
bidirectional; sequence_lens (a row's state stops at its length, its later Y
rows are 0); initial states; LSTM's peepholes; clip; GRU's
linear_before_reset. With `rounded`, the Cube's GEMMs (X W^T, h R^T, and
(r . h) Rh) see fp16 operands and pass back an fp16 gradient
(cube_rounding.py), as the device's do; differentiable by torch.autograd.
Checked against nn.LSTM / nn.GRU when the forward cases are made
(make_op_cases.py)."""
import torch

from cube_rounding import g16, r16


def torch_to_onnx_gates(w, op):
    """torch's gate blocks (LSTM i, f, g, o; GRU r, z, n) in ONNX's order (i, o, f, c; z, r, h), along dim 0."""
    blocks = w.chunk(4 if op == "LSTM" else 3, 0)
    order = [0, 3, 1, 2] if op == "LSTM" else [1, 0, 2]
    return torch.cat([blocks[k] for k in order], 0)


def onnx_rnn(op, ins, attrs, rounded=True):
    """ins: X, W, R[, B, sequence_lens, initial_h, initial_c, P] as float64 tensors (None: omitted);
    attrs: the node's attributes. Returns Y, Y_h (and LSTM's Y_c)."""
    ins = list(ins) + [None] * (8 - len(ins))
    x, w, r, b, lens, h0, c0, p = ins
    seq, batch = x.shape[0], x.shape[1]
    dirs, gates, hid = w.shape[0], 4 if op == "LSTM" else 3, r.shape[2]
    f64 = dict(dtype=torch.float64)
    b = torch.zeros(dirs, 2 * gates * hid, **f64) if b is None else b
    lens = torch.full((batch,), seq) if lens is None else lens.long()
    h0 = torch.zeros(dirs, batch, hid, **f64) if h0 is None else h0
    c0 = torch.zeros(dirs, batch, hid, **f64) if c0 is None or op != "LSTM" else c0
    p = torch.zeros(dirs, 3 * hid, **f64) if p is None or op != "LSTM" else p
    clip = attrs.get("clip", 0.0)
    direction = attrs.get("direction", "forward")
    lbr = attrs.get("linear_before_reset", 0)
    operand, gradient = (r16, g16) if rounded else ((lambda v: v), (lambda v: v))

    def cube(a, m):
        return gradient(operand(a) @ operand(m).T)

    def clipped(v):
        return torch.clamp(v, -clip, clip) if clip > 0 else v

    ys, yh, yc = [], [], []
    for d in range(dirs):
        H = hid
        rb = b[d, gates * H:]
        xw = cube(x, w[d]) + b[d, :gates * H]  # [seq, batch, gates x H]
        h, c = h0[d], c0[d]
        out = [None] * seq
        order = range(seq - 1, -1, -1) if direction == "reverse" or d == 1 else range(seq)
        for t in order:
            if op == "LSTM":
                a = clipped(xw[t] + cube(h, r[d]) + rb)
                ai, ao, af, ac = a.split(H, -1)
                i = torch.sigmoid(ai + p[d, :H] * c)
                f = torch.sigmoid(af + p[d, 2 * H:] * c)
                c_new = f * c + i * torch.tanh(ac)
                o = torch.sigmoid(ao + p[d, H:2 * H] * c_new)
                h_new = o * torch.tanh(c_new)
            else:
                zr = torch.sigmoid(clipped(xw[t, :, :2 * H] + cube(h, r[d, :2 * H]) + rb[:2 * H]))
                z, rr = zr[:, :H], zr[:, H:]
                if lbr:
                    pre = xw[t, :, 2 * H:] + rr * (cube(h, r[d, 2 * H:]) + rb[2 * H:])
                else:
                    pre = xw[t, :, 2 * H:] + cube(rr * h, r[d, 2 * H:]) + rb[2 * H:]
                h_new = (1 - z) * torch.tanh(clipped(pre)) + z * h
                c_new = c
            live = (t < lens).unsqueeze(1)
            h = torch.where(live, h_new, h)
            c = torch.where(live, c_new, c)
            out[t] = torch.where(live, h_new, torch.zeros_like(h_new))
        ys.append(torch.stack(out))
        yh.append(h)
        yc.append(c)
    result = [torch.stack(ys, 1), torch.stack(yh)]
    if op == "LSTM":
        result.append(torch.stack(yc))
    return result
