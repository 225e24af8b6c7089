"""Train a small GPT on train.txt for longer, with a tuned schedule, and save it for the evaluator.

Changes from the starter (which stopped after 60 steps, far from converged): more
training steps, a linear warm-up followed by cosine decay of the learning rate, weight
decay and gradient clipping. The model itself is the starter's.

Text is split into tokens on whitespace, and every line ends with the token "<eos>";
vocab.txt fixes the token ids (line number = id). The model is a two-layer transformer
decoder, 64 wide, reading at most 64 tokens. It reports its
perplexity on dev.txt, measured the way the test text is scored, and saves itself as
TorchScript to output/model.pt.

The saved model must keep this interface (see the task description): called on a
LongTensor of token ids of shape (batch, length), length <= context_length, it returns
next-token logits (or log-probabilities) of shape (batch, length, vocabulary size); the
module has an int attribute `context_length`.
"""

import math
import os
import time

import torch
from torch import nn
from torch.nn import functional as F

CONTEXT_LENGTH = 64
WIDTH = 64
LAYERS = 2
HEADS = 4
BATCH_SIZE = 32
STEPS = 200
LEARNING_RATE = 3e-3
WARMUP = 30


def read_vocab(path="vocab.txt"):
    with open(path, encoding="utf-8") as file:
        tokens = file.read().split("\n")
    return {token: index for index, token in enumerate(t for t in tokens if t)}


def encode(path, vocab):
    """The token ids of a text file, with "<eos>" closing every line (unknown words: "<unk>")."""
    unknown = vocab.get("<unk>")
    ids = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            ids.extend(vocab.get(token, unknown) for token in line.split())
            ids.append(vocab["<eos>"])
    return torch.tensor(ids, dtype=torch.long)


class Block(nn.Module):
    """Pre-norm transformer block: causal self-attention, then a two-layer MLP."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=2)
        q = q.view(batch, length, self.heads, width // self.heads).transpose(1, 2)
        k = k.view(batch, length, self.heads, width // self.heads).transpose(1, 2)
        v = v.view(batch, length, self.heads, width // self.heads).transpose(1, 2)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    context_length: int

    def __init__(self, vocab_size: int, context_length: int, width: int, layers: int, heads: int):
        super().__init__()
        self.context_length = context_length
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.position_embedding = nn.Embedding(context_length, width)
        self.blocks = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


@torch.no_grad()
def perplexity(model, ids, eos_id):
    """Perplexity of a token stream, scored as the evaluator scores test.txt.

    The stream is preceded by one "<eos>"; windows of context_length tokens slide by half
    a window, and each token is scored once, in the first window that predicts it.
    """
    stream = torch.cat([torch.tensor([eos_id]), ids])
    window = model.context_length
    stride = max(1, window // 2)
    total, scored = 0.0, 0  # scored = how many tokens of the stream (after the first) are done
    start = 0
    while scored < len(stream) - 1:
        inputs = stream[start:start + window]
        targets = stream[start + 1:start + window + 1]
        log_probs = F.log_softmax(model(inputs[None, :len(targets)]).double(), dim=-1)[0]
        new = slice(scored - start, len(targets))  # skip targets an earlier window scored
        total -= log_probs[new].gather(1, targets[new, None]).sum().item()
        scored = start + len(targets)
        start += stride
    return math.exp(total / (len(stream) - 1))


if __name__ == "__main__":
    torch.manual_seed(0)
    vocab = read_vocab()
    train_ids = encode("train.txt", vocab)
    dev_ids = encode("dev.txt", vocab)
    model = TinyGPT(len(vocab), CONTEXT_LENGTH, WIDTH, LAYERS, HEADS)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.05)
    # Linear warm-up, then cosine decay to a tenth of the peak learning rate.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / WARMUP) * (
        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(step, STEPS) / STEPS))))

    start_time = time.perf_counter()
    model.train()
    for step in range(STEPS):
        starts = torch.randint(len(train_ids) - CONTEXT_LENGTH - 1, (BATCH_SIZE,))
        batch = torch.stack([train_ids[s:s + CONTEXT_LENGTH + 1] for s in starts.tolist()])
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 100 == 0 or step == STEPS - 1:
            print(f"step {step:4d}  train loss {loss.item():.3f}")
    print(f"Trained for {time.perf_counter() - start_time:.1f} s")

    model.eval()
    print(f"Dev perplexity: {perplexity(model, dev_ids, vocab['<eos>']):.3f}")
    os.makedirs("output", exist_ok=True)
    torch.jit.save(torch.jit.script(model), "output/model.pt")
    print("Saved the model to output/model.pt")
