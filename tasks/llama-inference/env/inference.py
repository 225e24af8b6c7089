"""Greedy text generation with a small Llama-style model: the script to speed up.

Loads the model from weights.npz and the prompts from prompts.npy, continues every
prompt by `new_tokens` tokens (stored in weights.npz) with greedy decoding (always the
most likely next token), writes the generated token ids to output.npy as an int64 array
of shape (number of prompts, new_tokens) and prints the time per generated token.

The model is a Llama in miniature: token embeddings, then blocks of RMSNorm, causal
multi-head self-attention with rotary position embeddings and a SwiGLU feed-forward
layer, each added back to the residual stream, then a final RMSNorm and a linear map to
the vocabulary. Generation here is simple and slow: one prompt at a time, and every new
token runs the model over the whole sequence again.
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

    def forward(self, x):
        batch, seq, dim = x.shape
        positions = torch.arange(seq, device=x.device)

        def heads(t):
            return t.view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)

        q = apply_rotary(heads(self.wq(x)), positions, self.theta)
        k = apply_rotary(heads(self.wk(x)), positions, self.theta)
        v = heads(self.wv(x))
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=x.device), diagonal=1)
        scores = scores.masked_fill(causal, float("-inf"))
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

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class TinyLlama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_embeddings = nn.Embedding(cfg["vocab_size"], cfg["dim"])
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg["n_layers"]))
        self.norm = RMSNorm(cfg["dim"], cfg["norm_eps"])
        self.output = nn.Linear(cfg["dim"], cfg["vocab_size"], bias=False)

    def forward(self, tokens):
        """Logits of shape (batch, seq, vocab) for every position of `tokens` (batch, seq)."""
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x))


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


def generate(model, prompt, new_tokens):
    """Greedy continuation of one prompt, one token at a time, rerunning the whole sequence."""
    tokens = prompt.clone()
    for _ in range(new_tokens):
        logits = model(tokens[None, :])
        next_token = logits[0, -1].argmax()
        tokens = torch.cat([tokens, next_token[None]])
    return tokens[len(prompt):]


if __name__ == "__main__":
    model, cfg = load_model("weights.npz")
    prompts = torch.from_numpy(np.load("prompts.npy")).to(DEVICE)
    start = time.perf_counter()
    with torch.no_grad():
        outputs = [generate(model, prompt, cfg["new_tokens"]) for prompt in prompts]
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    generated = torch.stack(outputs).cpu().numpy().astype(np.int64)
    np.save("output.npy", generated)
    print(f"Generated {generated.size} tokens for {len(prompts)} prompts on {DEVICE}")
    print(f"Average time per token: {elapsed / generated.size * 1000:.3f} ms")
