"""Reference test for value networks whose input gradient is on the tape (dg_mlp_forward_grad,
src/policy/mlp.c) against PyTorch's double backward.

The C side (tests/drivers/value_grad_dump.c, built over float as value_grad_dump and over double as
value_grad_dump64) draws a sine (SIREN) or tanh value network V(x, tau), 4 -> 32 -> 32 -> 1 with a
linear last layer, and 64 points; it writes the weights, the points, V, its input gradient dV, the
loss

    L = mean_b (dV/dtau + |grad_x V|_1 - |x|^2)^2 + mean_b (V - x_0)^2

and dL/dweights from the tape's ordinary backward. Here the same network is built from torch.nn.Linear
layers in the file's dtype, grad V comes from torch.autograd.grad(..., create_graph=True), and the
loss's weight gradient from a second backward through that graph. Passes when every tensor
(V, dV, the loss, each weight's gradient) has max|ours - torch| / max|torch| within 1e-5 for float32
and 1e-10 for float64, for both activations and two seeds. A float64 PyTorch run on the float32
weights is printed beside the float32 comparison (how far each side is from exact). Exit 0 on pass.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import st_py  # noqa: E402

TOL = {"f32": 1e-5, "f64": 1e-10}


class ValueNet(torch.nn.Module):
    """Linear layers named as the checkpoint (value.0, value.2, ...), act between them, none after the last."""

    def __init__(self, sizes, act, omega0):
        super().__init__()
        self.value = torch.nn.ModuleDict(
            {str(2 * i): torch.nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1)})
        self.act, self.omega0 = act, omega0

    def forward(self, x):
        layers = list(self.value.values())
        h = x
        for i, lin in enumerate(layers):
            z = lin(h)
            if i == len(layers) - 1:
                return z
            h = torch.sin(self.omega0 * z) if self.act == "sine" else torch.tanh(z)


def torch_side(tensors, meta, dtype):
    """The network of the dump in dtype; returns {name: tensor} as the C side names them."""
    names = sorted(k[len("value."):-len(".weight")] for k in tensors if k.startswith("value.") and k.endswith(".weight"))
    names = sorted(names, key=int)
    sizes = [tensors[f"value.{names[0]}.weight"].shape[1]] + [tensors[f"value.{n}.weight"].shape[0] for n in names]
    net = ValueNet(sizes, meta["act"], float(meta["omega0"])).to(dtype)
    net.load_state_dict({k: v.to(dtype) for k, v in tensors.items() if k.startswith("value.")}, strict=True)
    x = tensors["x"].to(dtype).clone().requires_grad_(True)
    d = x.shape[1] - 1
    v = net(x)
    (g,) = torch.autograd.grad(v.sum(), x, create_graph=True)
    res = g[:, d] + g[:, :d].abs().sum(dim=1) - (x[:, :d] ** 2).sum(dim=1)
    loss = (res ** 2).mean() + ((v[:, 0] - x[:, 0]) ** 2).mean()
    params = dict(net.named_parameters())
    grads = torch.autograd.grad(loss, list(params.values()))
    out = {"V": v.detach(), "dV": g.detach(), "loss": loss.detach().reshape(1)}
    out.update({"grad." + k: gr for k, gr in zip(params, grads)})
    return out


def rel(ours, ref):
    """max|ours - ref| / max|ref| over a tensor (in float64)"""
    ours, ref = ours.double(), ref.double()
    return ((ours - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


def check(label, tensors, ref, tol, diag=None):
    """Prints each tensor's relative difference from PyTorch; True when all are within tol."""
    ok = True
    print(f"\n{label} (tolerance {tol:g})")
    for k in sorted(ref):
        r = rel(tensors[k], ref[k])
        extra = f"   (float64 torch: ours {rel(tensors[k], diag[k]):.2e}, float32 torch {rel(ref[k], diag[k]):.2e})" if diag else ""
        flag = "" if r <= tol else "   FAIL"
        ok &= r <= tol
        print(f"  {k:22s} {r:.2e}{extra}{flag}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the build folder (holding tests/value_grad_dump and value_grad_dump64)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ok = True
    with tempfile.TemporaryDirectory(prefix="ref_value_grad_") as tmp:
        for prec, exe in (("f32", "value_grad_dump"), ("f64", "value_grad_dump64")):
            for act in ("sine", "tanh"):
                for seed in (1, 2):
                    path = os.path.join(tmp, f"{prec}_{act}_{seed}.safetensors")
                    subprocess.run([os.path.join(args.build, "tests", exe), path, act, str(seed)], check=True)
                    tensors, meta = st_py.load(path, with_metadata=True)
                    if meta.get("precision") != prec or meta.get("act") != act:
                        print(f"FAIL: {path}: metadata {meta}")
                        ok = False
                        continue
                    dtype = torch.float32 if prec == "f32" else torch.float64
                    ref = torch_side(tensors, meta, dtype)
                    diag = torch_side(tensors, meta, torch.float64) if prec == "f32" else None
                    ok &= check(f"{prec} {act} seed {seed}", tensors, ref, TOL[prec], diag)
    print("\nref_value_grad: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
