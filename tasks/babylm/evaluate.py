"""Score a babylm submission: the perplexity of the saved model on the private test text.

The submission is output/model.pt in the workspace, a TorchScript module (saved with
torch.jit.save), so it loads without any of the agent's Python code. Its contract:
  - an int attribute `context_length`, the most tokens it reads at once;
  - called on a LongTensor (batch, length) of token ids (ids from vocab.txt, length <=
    context_length), it returns a float tensor (batch, length, vocabulary size) of
    next-token logits or log-probabilities; a log-softmax is applied here either way.
Tokens are the whitespace-separated words of each line followed by "<eos>" (words outside
vocab.txt count as "<unk>" where the vocabulary has it). The test stream is preceded by
one "<eos>" and read in windows of context_length tokens that slide by half a window;
every token is scored once, in the first window that predicts it. The score is
exp(mean negative log-likelihood per token): lower is better.
"""
from __future__ import annotations

import math
from pathlib import Path

MODEL_FILE = "output/model.pt"
EOS = "<eos>"
UNKNOWN = "<unk>"
MAX_CONTEXT = 4096  # far beyond what this task needs; bounds the evaluator's memory


class SubmissionInvalid(ValueError):
    """The submitted model cannot be scored; the message says what to fix."""


def first_line(error: Exception, limit: int = 160) -> str:
    """The error's type and the first line of its message, cut to `limit` characters."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text[:limit]}"


def read_vocab(path: Path) -> dict[str, int]:
    tokens = [t for t in path.read_text(encoding="utf-8").split("\n") if t]
    return {token: index for index, token in enumerate(tokens)}


def encode(text: str, vocab: dict[str, int]) -> list[int]:
    """Token ids of a text, "<eos>" closing every line; words outside the vocabulary become "<unk>"."""
    unknown = vocab.get(UNKNOWN)
    ids = []
    for line in text.splitlines():
        for token in line.split():
            index = vocab.get(token, unknown)
            if index is None:  # the lite grammar's vocabulary is closed: a miss is a broken task
                raise RuntimeError(f"test token {token!r} is not in vocab.txt, which has no {UNKNOWN}")
            ids.append(index)
        ids.append(vocab[EOS])
    return ids


def load_model(workspace: Path):
    """The TorchScript model of the workspace and its context length, or SubmissionInvalid."""
    import torch

    path = Path(workspace) / MODEL_FILE
    if not path.is_file():
        raise SubmissionInvalid(f"{MODEL_FILE} does not exist: save the model with "
                                f"torch.jit.save(torch.jit.script(model), {MODEL_FILE!r})")
    try:
        model = torch.jit.load(str(path), map_location="cpu")
    except Exception as error:  # any unreadable file is the submission's fault, said plainly
        raise SubmissionInvalid(f"{MODEL_FILE} cannot be loaded with torch.jit.load ({first_line(error)}); "
                                f"save a scripted module, not a pickled one or a state dict") from None
    context = getattr(model, "context_length", None)
    if isinstance(context, bool) or not isinstance(context, int) or not 1 <= context <= MAX_CONTEXT:
        raise SubmissionInvalid(f"the model needs an int attribute context_length between 1 and {MAX_CONTEXT} "
                                f"(found {context!r})")
    model.eval()
    return model, context


def stream_perplexity(model, context: int, ids: list[int], eos_id: int, vocab_size: int) -> float:
    """exp(mean NLL) of `ids` after one leading "<eos>", in half-overlapping windows."""
    import torch

    stream = torch.tensor([eos_id] + ids, dtype=torch.long)
    stride = max(1, context // 2)
    total, scored, start = 0.0, 0, 0
    with torch.no_grad():
        while scored < len(stream) - 1:
            targets = stream[start + 1:start + context + 1]
            inputs = stream[start:start + len(targets)]
            try:
                output = model(inputs[None, :])
            except Exception as error:
                raise SubmissionInvalid(f"the model failed on a (1, {len(inputs)}) LongTensor of token ids: "
                                        f"{first_line(error)}") from None
            expected = (1, len(inputs), vocab_size)
            if not isinstance(output, torch.Tensor) or tuple(output.shape) != expected:
                shape = tuple(output.shape) if isinstance(output, torch.Tensor) else type(output).__name__
                raise SubmissionInvalid(f"the model returned {shape}; expected a tensor of shape {expected} "
                                        f"(batch, length, vocabulary size)")
            log_probs = torch.log_softmax(output[0].double(), dim=-1)
            new = slice(scored - start, len(targets))  # targets an earlier window did not score
            total -= log_probs[new].gather(1, targets[new, None]).sum().item()
            scored = start + len(targets)
            start += stride
    mean = total / (len(stream) - 1)
    if not math.isfinite(mean):
        raise SubmissionInvalid("the model's log-probabilities are not finite (NaN or -inf) on the test text")
    return math.exp(mean)


def score(workspace: Path, private_dir: Path) -> float:
    """Perplexity per token of output/model.pt on the private test.txt (lower is better)."""
    private_dir = Path(private_dir)
    vocab = read_vocab(private_dir / "vocab.txt")
    ids = encode((private_dir / "test.txt").read_text(encoding="utf-8"), vocab)
    model, context = load_model(Path(workspace))
    return stream_perplexity(model, context, ids, vocab[EOS], len(vocab))
