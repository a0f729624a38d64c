"""A llama-architecture model (byte-level or the v2 SentencePiece vocabulary) in torch, laid out exactly as this engine (and llama.cpp's
`llama` architecture) computes it: pre-norm RMSNorm (eps 1e-5), no biases, SwiGLU FFN, untied output,
RoPE over interleaved pairs (2i, 2i+1) with theta Config.rope_theta (10000 for the first family;
llama.cpp's normal llama RoPE), so the weights go into GGUF without any q/k permutation."""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


@dataclass
class Config:
    vocab: int = 258
    d_model: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_kv_head: int = 4
    d_ff: int = 704
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    n_ctx: int = 4096
    # "byte" (the first family: 256 bytes + BOS + EOS) or "spm-v2" (data_v2.SPM_PATH, the v2
    # SentencePiece vocabulary); gguf_export writes the matching tokenizer metadata
    tokenizer: str = "byte"

    @property
    def head_dim(self):
        return self.d_model // self.n_head

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * self.weight).to(x.dtype)


def rope_tables(T, hd, theta, device=None):
    i = torch.arange(hd // 2, dtype=torch.float64)
    inv = theta ** (-2.0 * i / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    # x: (B, H, T, hd); pairs (2i, 2i+1)
    x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2).to(x.dtype)


SOFTMAX_FP32 = True  # train.py --bf16-softmax-until-step sets False (reproduces early shipped steps)


def causal_attention(q, k, v, chunk=1024):
    """Causal softmax attention, computed in query blocks so fully masked key blocks are skipped.
    q: (B, H, T, hd), k/v: (B, Hkv, T, hd). Scores come out of the matmul in q's dtype (bf16 under
    autocast) for the matmuls; the softmax and its backward run in fp32 (a bf16 softmax halved the
    gradients and turned them by ~25 degrees: cosine 0.9 to the fp32 gradient)."""
    B, H, T, hd = q.shape
    if k.shape[1] != H:
        rep = H // k.shape[1]
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
    q = q * (1.0 / math.sqrt(hd))
    outs = []
    for s in range(0, T, chunk):
        e = min(T, s + chunk)
        sc = torch.matmul(q[:, :, s:e], k[:, :, :e].transpose(-1, -2))
        mask = torch.ones(e - s, e, dtype=torch.bool).triu_(s + 1)
        sc = (sc.float() if SOFTMAX_FP32 else sc).masked_fill(mask, float("-inf"))
        p = torch.softmax(sc, dim=-1).to(v.dtype)
        outs.append(torch.matmul(p, v[:, :, :e]))
    return outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)


class Block(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.c = c
        hd = c.head_dim
        self.attn_norm = RMSNorm(c.d_model, c.norm_eps)
        self.wq = nn.Linear(c.d_model, c.n_head * hd, bias=False)
        self.wk = nn.Linear(c.d_model, c.n_kv_head * hd, bias=False)
        self.wv = nn.Linear(c.d_model, c.n_kv_head * hd, bias=False)
        self.wo = nn.Linear(c.n_head * hd, c.d_model, bias=False)
        self.ffn_norm = RMSNorm(c.d_model, c.norm_eps)
        self.w_gate = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.w_up = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.w_down = nn.Linear(c.d_ff, c.d_model, bias=False)

    def forward(self, x, cos, sin):
        c, (B, T, _) = self.c, x.shape
        hd = c.head_dim
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, c.n_head, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, c.n_kv_head, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, c.n_kv_head, hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        a = causal_attention(q, k, v).transpose(1, 2).reshape(B, T, c.n_head * hd)
        x = x + self.wo(a)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class LlamaModel(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.c = c
        self.tok_emb = nn.Embedding(c.vocab, c.d_model)
        self.blocks = nn.ModuleList([Block(c) for _ in range(c.n_layer)])
        self.norm = RMSNorm(c.d_model, c.norm_eps)
        self.out = nn.Linear(c.d_model, c.vocab, bias=False)
        self._rope = {}
        self.recompute_from_len = 0  # train.py: recompute blocks in backward at T >= this (0: never)
        s, s_res = 0.02, 0.02 / math.sqrt(2 * c.n_layer)
        for n, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, s_res if n.endswith(("wo.weight", "w_down.weight")) else s)

    def rope(self, T):
        if T not in self._rope:
            self._rope = {T: rope_tables(T, self.c.head_dim, self.c.rope_theta)}
        return self._rope[T]

    def forward(self, idx):
        B, T = idx.shape
        cos, sin = self.rope(T)
        x = self.tok_emb(idx)
        recompute = (self.training and torch.is_grad_enabled() and self.recompute_from_len
                     and T >= self.recompute_from_len)
        for b in self.blocks:
            if recompute:  # activation checkpointing: same gradients, one block's memory
                x = torch.utils.checkpoint.checkpoint(b, x, cos, sin, use_reentrant=False)
            else:
                x = b(x, cos, sin)
        return self.out(self.norm(x))

    def n_params(self):
        return sum(p.numel() for p in self.parameters())
