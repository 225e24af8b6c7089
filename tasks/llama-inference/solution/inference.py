"""Greedy text generation with a small Llama-style model, with a key/value cache and batching.

Loads the model from weights.npz and the prompts from prompts.npy, continues every
prompt by `new_tokens` tokens (stored in weights.npz) with greedy decoding (always the
most likely next token), writes the generated token ids to output.npy as an int64 array
of shape (number of prompts, new_tokens) and prints the time per generated token.

The model is the same Llama in miniature as before (same weights, same float32
arithmetic), but generation does much less work:
  - all prompts are continued together, as one batch (they all have the same length);
  - the prompt is run through the model once, and each attention layer keeps the keys and
    values it computed (a key/value cache), so every later step runs the model on the
    one new token per prompt only, attending to the cached keys and values;
  - rotary angles are computed for the token's true position in the sequence.
Each new token's logits are therefore the same computation as before, up to rounding.
"""

import time

import numpy as np
import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def apply_rotary(x, positions, theta):
    """Rotate the two halves of every head vector by position-dependent angles."""
    half = x.shape[-1] // 2
    freqs = theta ** (-torch.arange(half, dtype=torch.float32, device=x.device) / half)
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = torch.cos(angles), torch.sin(angles)
    first, second = x[..., :half], x[..., half:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, n_heads, theta):
        super().__init__()
        self.n_heads, self.head_dim, self.theta = n_heads, dim // n_heads, theta
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cache, start):
        """x: the new positions start.. of every sequence; cache: this layer's [keys, values]."""
        batch, seq, dim = x.shape
        positions = torch.arange(start, start + seq, device=x.device)

        def heads(t):
            return t.view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)

        q = apply_rotary(heads(self.wq(x)), positions, self.theta)
        k = apply_rotary(heads(self.wk(x)), positions, self.theta)
        v = heads(self.wv(x))
        if cache[0] is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        cache[0], cache[1] = k, v
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        if seq > 1:  # a new position may not look at later new positions
            total = k.shape[2]
            future = positions[:, None] < torch.arange(total, device=x.device)[None, :]
            scores = scores.masked_fill(future, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(batch, seq, dim))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w_gate = nn.Linear(dim, hidden_dim, bias=False)
        self.w_up = nn.Linear(dim, hidden_dim, bias=False)
        self.w_down = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        return self.w_down(nn.functional.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention_norm = RMSNorm(cfg["dim"], cfg["norm_eps"])
        self.attention = Attention(cfg["dim"], cfg["n_heads"], cfg["rope_theta"])
        self.ffn_norm = RMSNorm(cfg["dim"], cfg["norm_eps"])
        self.feed_forward = FeedForward(cfg["dim"], cfg["hidden_dim"])

    def forward(self, x, cache, start):
        x = x + self.attention(self.attention_norm(x), cache, start)
        return x + self.feed_forward(self.ffn_norm(x))


class TinyLlama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_embeddings = nn.Embedding(cfg["vocab_size"], cfg["dim"])
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg["n_layers"]))
        self.norm = RMSNorm(cfg["dim"], cfg["norm_eps"])
        self.output = nn.Linear(cfg["dim"], cfg["vocab_size"], bias=False)

    def forward(self, tokens, caches, start):
        """Logits (batch, vocab) of the last of `tokens` (batch, seq), which sit at positions start.."""
        x = self.tok_embeddings(tokens)
        for layer, cache in zip(self.layers, caches):
            x = layer(x, cache, start)
        return self.output(self.norm(x[:, -1]))


def load_model(path):
    """The model with the weights of weights.npz, and its config."""
    archive = np.load(path)
    cfg = {key: archive[key].item() for key in ("vocab_size", "dim", "n_layers", "n_heads", "hidden_dim",
                                                "max_seq_len", "rope_theta", "norm_eps", "new_tokens")}
    model = TinyLlama(cfg)
    state = {}
    for name in model.state_dict():
        stored = name.replace(".attention.", ".").replace(".feed_forward.", ".").removesuffix(".weight")
        state[name] = torch.from_numpy(archive[stored])
    model.load_state_dict(state)
    return model.to(DEVICE).eval(), cfg


def generate_batch(model, prompts, new_tokens):
    """Greedy continuation of all prompts at once, feeding only the new token after the prompt."""
    caches = [[None, None] for _ in model.layers]
    tokens, start, generated = prompts, 0, []
    for _ in range(new_tokens):
        next_tokens = model(tokens, caches, start).argmax(-1)
        generated.append(next_tokens)
        start += tokens.shape[1]
        tokens = next_tokens[:, None]
    return torch.stack(generated, dim=1)


if __name__ == "__main__":
    model, cfg = load_model("weights.npz")
    prompts = torch.from_numpy(np.load("prompts.npy")).to(DEVICE)
    start = time.perf_counter()
    with torch.inference_mode():
        outputs = generate_batch(model, prompts, cfg["new_tokens"])
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    generated = outputs.cpu().numpy().astype(np.int64)
    np.save("output.npy", generated)
    print(f"Generated {generated.size} tokens for {len(prompts)} prompts on {DEVICE}")
    print(f"Average time per token: {elapsed / generated.size * 1000:.3f} ms")
