"""An independent BERTScore for checking the Rust encoder: a numpy BERT forward pass.

It shares no code with the Rust side (no torch, no transformers): numpy, safetensors and
tokenizers only, in float64, so it is a reference for the float32 encoder. The figures in
../encoder.rs came from it, with the quantifiers spelled out as the encoder does:

    python3 -m venv venv && venv/bin/pip install numpy safetensors tokenizers
    venv/bin/python bert_oracle.py MODEL_DIR " forall x (Eel(x) → Fish(x))" " exists x (Eel(x) → Fish(x))" ...

"strict" drops [CLS]/[SEP] altogether; "bert_score pkg semantics" lets them be a best match
but gives them no weight in the means, as the bert_score package does (the encoder's rule).
"""
import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

DT = np.float64


def erf(x):
    v = np.vectorize(math.erf)
    return v(x)


class Bert:
    def __init__(self, d):
        self.cfg = json.load(open(f"{d}/config.json"))
        w = load_file(f"{d}/model.safetensors")
        # sentence-transformers checkpoints lack the "bert." prefix; accept both.
        self.w = {(k[5:] if k.startswith("bert.") else k): v.astype(DT) for k, v in w.items()
                  if v.dtype != np.int64}
        self.tok = Tokenizer.from_file(f"{d}/tokenizer.json")
        self.tok.no_padding()  # tokenizer.json ships Fixed(128) padding
        self.tok.enable_truncation(self.cfg["max_position_embeddings"])
        self.eps = self.cfg["layer_norm_eps"]
        assert self.cfg["hidden_act"] == "gelu"

    def ln(self, x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def lin(self, x, p):
        return x @ self.w[p + ".weight"].T + self.w[p + ".bias"]

    def forward(self, ids, type_ids, mask):
        w, n = self.w, len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][np.arange(n)]
             + w["embeddings.token_type_embeddings.weight"][type_ids])
        x = self.ln(x, "embeddings.LayerNorm")
        H = self.cfg["num_attention_heads"]
        dh = self.cfg["hidden_size"] // H
        bias = (1.0 - np.asarray(mask, DT))[None, None, :] * np.finfo(np.float32).min
        for l in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{l}"
            q, k, v = (self.lin(x, f"{p}.attention.self.{t}").reshape(n, H, dh).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))
            s = q @ k.transpose(0, 2, 1) / math.sqrt(dh) + bias  # [H, n, n]
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(1, 0, 2).reshape(n, H * dh)
            x = self.ln(self.lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = self.lin(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
            x = self.ln(self.lin(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x

    def embed(self, text):
        e = self.tok.encode(text)
        h = self.forward(np.array(e.ids), np.array(e.type_ids), e.attention_mask)
        h /= np.linalg.norm(h, axis=-1, keepdims=True)
        return h, np.array(e.special_tokens_mask, bool), e.tokens

    def score(self, ref, cand):
        r, rs, _ = self.embed(ref)
        c, cs, _ = self.embed(cand)
        sim = c @ r.T  # [nc, nr]
        out = []
        # strict: CLS/SEP dropped everywhere; pkg: bert_score semantics (in max, weight 0 in mean)
        for drop_in_max in (True, False):
            s = sim.copy()
            if drop_in_max:
                s[cs, :] = -np.inf
                s[:, rs] = -np.inf
            P = s.max(1)[~cs].mean()
            R = s.max(0)[~rs].mean()
            out.append((P, R, 2 * P * R / (P + R)))
        return out


PAIRS = [
    ("∀x (Eel(x) → Fish(x))", "∀x (IsEel(x) → IsFish(x))"),
    ("∀x (Eel(x) → Fish(x))", "∃x (Eel(x) → Fish(x))"),
    ("p ∧ q", "p ∨ q"),
    ("∀x (Eel(x) → Fish(x))", "∀x (Eel(x) → Fish(x))"),
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
]

if __name__ == "__main__":
    d = sys.argv[1]
    pairs = list(zip(sys.argv[2::2], sys.argv[3::2])) or PAIRS
    m = Bert(d)
    for ref, cand in pairs:
        (sp, sr, sf), (pp, pr, pf) = m.score(ref, cand)
        print(f"ref : {ref!r} -> {m.embed(ref)[2]}")
        print(f"cand: {cand!r} -> {m.embed(cand)[2]}")
        print(f"  strict (CLS/SEP dropped) P={sp:.7f} R={sr:.7f} F1={sf:.7f}")
        print(f"  bert_score pkg semantics P={pp:.7f} R={pr:.7f} F1={pf:.7f}")
