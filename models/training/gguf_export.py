"""A minimal GGUF v3 writer and the export of a trained LlamaModel.

The metadata keys, their types and their order copy what models/synthetic.cpp writes for the
synthetic families (llama architecture; byte-level vocabulary: 256 GPT-2 byte pieces + <|bos|> +
<|eos|>, tokenizer.ggml.model 'gpt2', pre 'gpt-2'), plus an explicit empty tokenizer.ggml.merges
array (llama.cpp's gpt2 tokenizer requires the key) and accelbench.training.* provenance keys.
A model whose config says tokenizer 'spm-v2' gets the v2 SentencePiece vocabulary as a llama-SPM
vocabulary instead (write_spm_vocab).
Tensors: 2-D weights in F16 (or F32/BF16), norms in F32, named and shaped as the synthetic writer."""
import struct

import numpy as np
import torch

GGUF_MAGIC, GGUF_VERSION, ALIGN = 0x46554747, 3, 32
T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64, T_F64 = range(13)
GGML_F32, GGML_F16, GGML_BF16 = 0, 1, 30


def gpt2_byte_pieces():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    m = dict(zip(bs, cs))
    return [chr(m[b]) for b in range(256)]


class Writer:
    def __init__(self):
        self.kv = []  # (key, type, value, elem_type)
        self.tensors = []  # (name, dims(ggml order), ggml_type, bytes)

    def set(self, key, typ, value, elem=None):
        self.kv.append((key, typ, value, elem))

    def add_tensor(self, name, array, ggml_type):
        a = np.ascontiguousarray(array)
        if ggml_type == GGML_F32:
            data = a.astype("<f4").tobytes()
        elif ggml_type == GGML_F16:
            data = a.astype("<f2").tobytes()
        elif ggml_type == GGML_BF16:
            t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16).view(torch.int16)
            data = t.numpy().astype("<i2").tobytes()
        else:
            raise ValueError(ggml_type)
        dims = list(reversed(a.shape))  # ggml: innermost (row length) first
        self.tensors.append((name, dims, ggml_type, data))

    @staticmethod
    def _str(s):
        b = s.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def _scalar(self, typ, v):
        fmt = {T_U8: "<B", T_I8: "<b", T_U16: "<H", T_I16: "<h", T_U32: "<I", T_I32: "<i",
               T_F32: "<f", T_BOOL: "<?", T_U64: "<Q", T_I64: "<q", T_F64: "<d"}
        if typ == T_STR:
            return self._str(v)
        return struct.pack(fmt[typ], v)

    def write(self, path):
        out = bytearray()
        out += struct.pack("<IIQQ", GGUF_MAGIC, GGUF_VERSION, len(self.tensors), len(self.kv))
        for key, typ, v, elem in self.kv:
            out += self._str(key) + struct.pack("<I", typ)
            if typ == T_ARR:
                out += struct.pack("<IQ", elem, len(v))
                for x in v:
                    out += self._scalar(elem, x)
            else:
                out += self._scalar(typ, v)
        off = 0
        for name, dims, gt, data in self.tensors:
            out += self._str(name) + struct.pack("<I", len(dims))
            for d in dims:
                out += struct.pack("<Q", d)
            out += struct.pack("<IQ", gt, off)
            off += (len(data) + ALIGN - 1) // ALIGN * ALIGN
        out += b"\0" * ((-len(out)) % ALIGN)
        for _, _, _, data in self.tensors:
            out += data + b"\0" * ((-len(data)) % ALIGN)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(out)
        import os
        os.replace(tmp, path)


# llama.cpp's llama_token_type values
TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER_DEFINED, TT_UNUSED, TT_BYTE = 1, 2, 3, 4, 5, 6


def spm_vocab(path):
    """A SentencePiece model as llama-SPM GGUF fields: (tokens, scores, types, bos, eos, unk)."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=path)
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(float(sp.get_score(i)))
        types.append(TT_UNKNOWN if sp.is_unknown(i) else TT_CONTROL if sp.is_control(i) else
                     TT_BYTE if sp.is_byte(i) else TT_UNUSED if sp.is_unused(i) else TT_NORMAL)
    if types.count(TT_BYTE) != 256:
        raise SystemExit(f"{path}: {types.count(TT_BYTE)} byte pieces, not 256 (byte_fallback?)")
    return tokens, scores, types, sp.bos_id(), sp.eos_id(), sp.unk_id()


def write_spm_vocab(w, c):
    """The v2 vocabulary as llama.cpp's `llama` (SPM) tokenizer reads it: pieces with U+2581 for
    spaces, BPE scores (merge priority), token types, <0xNN> byte pieces, BOS/EOS/UNK ids, a
    space prefix before the first text, BOS added and EOS not."""
    import hashlib
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import data_v2
    if c.tokenizer != "spm-v2":
        raise SystemExit(f"unknown tokenizer '{c.tokenizer}' in the model config")
    tokens, scores, types, bos, eos, unk = spm_vocab(data_v2.SPM_PATH)
    if len(tokens) != c.vocab:
        raise SystemExit(f"{data_v2.SPM_PATH}: {len(tokens)} pieces, the model has {c.vocab}")
    w.set("tokenizer.ggml.model", T_STR, "llama")
    w.set("tokenizer.ggml.tokens", T_ARR, tokens, T_STR)
    w.set("tokenizer.ggml.scores", T_ARR, scores, T_F32)
    w.set("tokenizer.ggml.token_type", T_ARR, types, T_I32)
    w.set("tokenizer.ggml.bos_token_id", T_U32, bos)
    w.set("tokenizer.ggml.eos_token_id", T_U32, eos)
    w.set("tokenizer.ggml.unknown_token_id", T_U32, unk)
    w.set("tokenizer.ggml.add_bos_token", T_BOOL, True)
    w.set("tokenizer.ggml.add_eos_token", T_BOOL, False)
    w.set("tokenizer.ggml.add_space_prefix", T_BOOL, True)
    w.set("accelbench.vocab.spm_sha256", T_STR,
          hashlib.sha256(open(data_v2.SPM_PATH, "rb").read()).hexdigest())


def export(model, path, family, role, seed, dtype="f16", extra=None):
    """Writes model (a LlamaModel) as a llama GGUF. extra: {key: str|int|float} provenance."""
    c = model.c
    gt = {"f32": GGML_F32, "f16": GGML_F16, "bf16": GGML_BF16}[dtype]
    w = Writer()
    a = "llama"
    w.set("general.architecture", T_STR, a)
    w.set("general.name", T_STR, f"accelbench-{family}-{role}")
    w.set("general.file_type", T_U32, gt)
    w.set("accelbench.family", T_STR, family)
    w.set("accelbench.role", T_STR, role)
    w.set("accelbench.seed", T_U64, int(seed))
    w.set(a + ".vocab_size", T_U32, c.vocab)
    w.set(a + ".context_length", T_U32, c.n_ctx)
    w.set(a + ".embedding_length", T_U32, c.d_model)
    w.set(a + ".block_count", T_U32, c.n_layer)
    w.set(a + ".feed_forward_length", T_U32, c.d_ff)
    w.set(a + ".attention.head_count", T_U32, c.n_head)
    w.set(a + ".attention.head_count_kv", T_U32, c.n_kv_head)
    w.set(a + ".attention.layer_norm_rms_epsilon", T_F32, c.norm_eps)
    w.set(a + ".rope.freq_base", T_F32, c.rope_theta)
    w.set(a + ".rope.dimension_count", T_U32, c.head_dim)
    if getattr(c, "tokenizer", "byte") == "byte":
        tokens = gpt2_byte_pieces() + ["<|bos|>", "<|eos|>"]
        w.set("tokenizer.ggml.model", T_STR, "gpt2")
        w.set("tokenizer.ggml.pre", T_STR, "gpt-2")
        w.set("tokenizer.ggml.tokens", T_ARR, tokens, T_STR)
        w.set("tokenizer.ggml.token_type", T_ARR, [1] * 256 + [3, 3], T_I32)
        w.set("tokenizer.ggml.merges", T_ARR, [], T_STR)
        w.set("tokenizer.ggml.bos_token_id", T_U32, 256)
        w.set("tokenizer.ggml.eos_token_id", T_U32, 257)
        w.set("tokenizer.ggml.add_bos_token", T_BOOL, True)
        w.set("tokenizer.ggml.add_eos_token", T_BOOL, False)
    else:
        write_spm_vocab(w, c)
    for k, v in (extra or {}).items():
        if isinstance(v, str):
            w.set(k, T_STR, v)
        elif isinstance(v, float):
            w.set(k, T_F32, v)
        else:
            w.set(k, T_U64, int(v))

    def mat(name, t):
        w.add_tensor(name, t.detach().float().cpu().numpy(), gt)

    def vec(name, t):
        w.add_tensor(name, t.detach().float().cpu().numpy(), GGML_F32)

    mat("token_embd.weight", model.tok_emb.weight)
    for l, b in enumerate(model.blocks):
        p = f"blk.{l}."
        vec(p + "attn_norm.weight", b.attn_norm.weight)
        mat(p + "attn_q.weight", b.wq.weight)
        mat(p + "attn_k.weight", b.wk.weight)
        mat(p + "attn_v.weight", b.wv.weight)
        mat(p + "attn_output.weight", b.wo.weight)
        vec(p + "ffn_norm.weight", b.ffn_norm.weight)
        mat(p + "ffn_gate.weight", b.w_gate.weight)
        mat(p + "ffn_up.weight", b.w_up.weight)
        mat(p + "ffn_down.weight", b.w_down.weight)
    vec("output_norm.weight", model.norm.weight)
    mat("output.weight", model.out.weight)
    w.write(path)


def rounded_copy(model, dtype="f16"):
    """A copy of model whose 2-D weights are rounded as the export stores them (for logit checks)."""
    import copy
    m = copy.deepcopy(model)
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() == 2 and dtype == "f16":
                p.copy_(p.half().float())
            elif p.dim() == 2 and dtype == "bf16":
                p.copy_(p.bfloat16().float())
    return m


def main():
    """Export a checkpoint: python3 gguf_export.py --ckpt best.pt --out M.gguf --role target
    [--keep-layers N (a layer-pruned copy: first N blocks)] [--n-ctx N] [--dtype f16]"""
    import argparse
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from model import Config, LlamaModel
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--role", required=True)
    ap.add_argument("--family", default="capable")
    ap.add_argument("--keep-layers", type=int, default=0)
    ap.add_argument("--n-ctx", type=int, default=0)
    ap.add_argument("--dtype", default="f16")
    a = ap.parse_args()
    ck = torch.load(a.ckpt)
    cfg = dict(ck["config"])
    sd = ck["model"]
    if a.keep_layers:
        cfg["n_layer"] = a.keep_layers
        sd = {k: v for k, v in sd.items()
              if not k.startswith("blocks.") or int(k.split(".")[1]) < a.keep_layers}
    if a.n_ctx:
        cfg["n_ctx"] = a.n_ctx
    m = LlamaModel(Config(**cfg))
    m.load_state_dict(sd)
    st = ck.get("state", {})
    extra = {"accelbench.training.step": st.get("step", 0),
             "accelbench.training.source": os.path.basename(a.ckpt)}
    if a.keep_layers:
        extra["accelbench.training.layer_pruned_from_layers"] = ck["config"]["n_layer"]
    seed = ck.get("args", {}).get("seed", 0) if "args" in ck else 0
    export(m, a.out, a.family, a.role, seed, a.dtype, extra)
    print("wrote", a.out, cfg)


if __name__ == "__main__":
    main()
