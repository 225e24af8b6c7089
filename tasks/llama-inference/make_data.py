"""Generate the tiny Llama-style model and prompts of the llama-inference task (numpy only).

Writes into the public folder:
  weights.npz  the model: scalar config entries (vocab_size, dim, n_layers, n_heads,
               hidden_dim, max_seq_len, rope_theta, norm_eps) and float32 weight matrices
               in torch's (out_features, in_features) layout
  prompts.npy  int64 (batch, prompt_length) token ids, every prompt of the same length
and into the private folder expected_output.npy: the greedy continuation of every prompt,
computed here by an independent numpy forward pass with a key/value cache, in float64.

Greedy decoding of a random model can hinge on near-ties between the two best logits,
where float32 rounding in a differently ordered (faster) program could flip the choice.
The generator redraws the weights until every step's best logit leads the runner-up by
a clear margin, so any correct implementation reproduces the same tokens.

`make_full` writes the same public files for the original task's model, Llama-2-7B from
Hugging Face (a gated checkpoint: accept its licence and log in first), converted to the
starter's layout, with prompts cut from the wikitext-103 test set. It needs `transformers`
and `datasets` on the machine that prepares the data, about 30 GB of disk, and a GPU to
run the starter in reasonable time. It writes no private reference: the starter's own
output is the reference there.
"""
from __future__ import annotations

import pathlib

import numpy as np

CONFIG = {"vocab_size": 512, "dim": 128, "n_layers": 4, "n_heads": 4, "hidden_dim": 344,
          "max_seq_len": 256, "rope_theta": 10000.0, "norm_eps": 1e-5}
LITE_SHAPE = {"batch": 8, "prompt_length": 32, "new_tokens": 64}
SAMPLE_SHAPE = {"batch": 1, "prompt_length": 32, "new_tokens": 2}  # what mlabc check asks for
LOGIT_SCALE = 8.0  # spread of the output logits; large enough that greedy picks are clear
MIN_MARGIN = 0.002  # smallest accepted lead of the best logit over the second best
MAX_DRAWS = 20


def draw_weights(rng: np.random.Generator, cfg: dict) -> dict[str, np.ndarray]:
    """Random float32 weights; linear maps scaled by 1/sqrt(fan_in) to keep activations O(1)."""
    dim, hidden, vocab = cfg["dim"], cfg["hidden_dim"], cfg["vocab_size"]

    def linear(out_features: int, in_features: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal((out_features, in_features)) * scale / np.sqrt(in_features)).astype(np.float32)

    def norm_gain() -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(dim)).astype(np.float32)

    weights = {"tok_embeddings": rng.standard_normal((vocab, dim)).astype(np.float32)}
    for layer in range(cfg["n_layers"]):
        prefix = f"layers.{layer}."
        weights[prefix + "attention_norm"] = norm_gain()
        for name in ("wq", "wk", "wv"):
            weights[prefix + name] = linear(dim, dim, scale=1.5)  # sharper attention: context matters
        weights[prefix + "wo"] = linear(dim, dim)
        weights[prefix + "ffn_norm"] = norm_gain()
        weights[prefix + "w_gate"] = linear(hidden, dim)
        weights[prefix + "w_up"] = linear(hidden, dim)
        weights[prefix + "w_down"] = linear(dim, hidden)
    weights["norm"] = norm_gain()
    weights["output"] = linear(vocab, dim, scale=LOGIT_SCALE)
    return weights


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gain


def rotary(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    """Rotary position embedding of x (..., seq, head_dim), rotating its two halves."""
    half = x.shape[-1] // 2
    freqs = theta ** (-np.arange(half) / half)
    angles = positions[:, None] * freqs[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)


def greedy_generate(weights: dict, cfg: dict, prompts: np.ndarray, new_tokens: int) -> tuple[np.ndarray, float]:
    """Greedy continuation of all prompts (float64, key/value cache) and the smallest top-2 margin."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    batch, length = prompts.shape
    heads, head_dim = cfg["n_heads"], cfg["dim"] // cfg["n_heads"]
    eps, theta = cfg["norm_eps"], cfg["rope_theta"]
    cache = [([], []) for _ in range(cfg["n_layers"])]
    tokens, start, generated, margin = prompts, 0, [], np.inf
    for _ in range(new_tokens):
        positions = np.arange(start, start + tokens.shape[1])
        h = w["tok_embeddings"][tokens]  # (batch, seq, dim)
        for layer in range(cfg["n_layers"]):
            p = f"layers.{layer}."
            x = rms_norm(h, w[p + "attention_norm"], eps)

            def split(m):
                return (x @ w[p + m].T).reshape(batch, -1, heads, head_dim).transpose(0, 2, 1, 3)

            q, k, v = split("wq"), split("wk"), split("wv")
            q, k = rotary(q, positions, theta), rotary(k, positions, theta)
            keys, values = cache[layer]
            keys.append(k)
            values.append(v)
            k_all, v_all = np.concatenate(keys, axis=2), np.concatenate(values, axis=2)
            scores = q @ k_all.transpose(0, 1, 3, 2) / np.sqrt(head_dim)
            total = k_all.shape[2]
            future = positions[:, None] < np.arange(total)[None, :]  # causal mask
            scores = np.where(future, -np.inf, scores)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attn = (scores / scores.sum(axis=-1, keepdims=True)) @ v_all
            h = h + attn.transpose(0, 2, 1, 3).reshape(batch, -1, cfg["dim"]) @ w[p + "wo"].T
            x = rms_norm(h, w[p + "ffn_norm"], eps)
            gate = x @ w[p + "w_gate"].T
            h = h + ((gate / (1.0 + np.exp(-gate))) * (x @ w[p + "w_up"].T)) @ w[p + "w_down"].T
        logits = rms_norm(h[:, -1], w["norm"], eps) @ w["output"].T
        top_two = np.sort(logits, axis=-1)[:, -2:]
        margin = min(margin, float(np.min(top_two[:, 1] - top_two[:, 0])))
        next_tokens = logits.argmax(axis=-1)
        generated.append(next_tokens)
        start += tokens.shape[1]
        tokens = next_tokens[:, None]
    return np.stack(generated, axis=1).astype(np.int64), margin


def write_task(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, shape: dict) -> None:
    """Draw weights (until greedy picks are clear) and prompts; write the three files."""
    rng = np.random.default_rng(seed)
    prompts = rng.integers(0, CONFIG["vocab_size"], size=(shape["batch"], shape["prompt_length"]))
    for _ in range(MAX_DRAWS):
        weights = draw_weights(rng, CONFIG)
        expected, margin = greedy_generate(weights, CONFIG, prompts, shape["new_tokens"])
        if margin >= MIN_MARGIN:
            break
    else:
        raise RuntimeError(f"no weights with a top-2 logit margin of {MIN_MARGIN} in {MAX_DRAWS} draws")
    write_public(public_dir, CONFIG, shape["new_tokens"], weights, prompts)
    private_dir = pathlib.Path(private_dir)
    private_dir.mkdir(parents=True, exist_ok=True)
    np.save(private_dir / "expected_output.npy", expected)


def write_public(public_dir: pathlib.Path, config: dict, new_tokens: int, weights: dict,
                 prompts: np.ndarray) -> None:
    """weights.npz (config scalars, the number of tokens to generate, weights) and prompts.npy."""
    public_dir = pathlib.Path(public_dir)
    public_dir.mkdir(parents=True, exist_ok=True)
    stored = {key: np.asarray(value) for key, value in config.items()}
    stored["new_tokens"] = np.asarray(new_tokens)
    np.savez(public_dir / "weights.npz", **stored, **weights)
    np.save(public_dir / "prompts.npy", prompts.astype(np.int64))


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> None:
    """Lite variant: a 4-layer, 128-wide model; 8 prompts of 32 tokens, 64 new tokens each.

    `sample` (mlabc check asks for one): the same model and files, for one prompt and two new
    tokens (SAMPLE_SHAPE): the greedy reference of all 64 is most of the lite variant's making."""
    write_task(public_dir, private_dir, seed, LITE_SHAPE if sample is None else SAMPLE_SHAPE)


FULL_CHECKPOINT = "meta-llama/Llama-2-7b-hf"
FULL_SHAPE = {"batch": 16, "prompt_length": 128, "new_tokens": 32}
HF_LAYER_NAMES = {"self_attn.q_proj": "wq", "self_attn.k_proj": "wk", "self_attn.v_proj": "wv",
                  "self_attn.o_proj": "wo", "input_layernorm": "attention_norm",
                  "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "w_gate",
                  "mlp.up_proj": "w_up", "mlp.down_proj": "w_down"}


def convert_checkpoint(state: dict, hf_config) -> tuple[dict, dict]:
    """A Hugging Face Llama state dict and config → the starter's config and weight names.

    Hugging Face stores the query and key maps already arranged for the rotate-half form
    of rotary embeddings, which is the form the starter uses, so no permutation is needed.
    """
    if getattr(hf_config, "num_key_value_heads", hf_config.num_attention_heads) != hf_config.num_attention_heads:
        raise RuntimeError("the starter's attention has one key/value head per query head; "
                           "this checkpoint groups them (grouped-query attention)")
    config = {"vocab_size": hf_config.vocab_size, "dim": hf_config.hidden_size,
              "n_layers": hf_config.num_hidden_layers, "n_heads": hf_config.num_attention_heads,
              "hidden_dim": hf_config.intermediate_size, "max_seq_len": hf_config.max_position_embeddings,
              "rope_theta": float(getattr(hf_config, "rope_theta", 10000.0)),
              "norm_eps": float(hf_config.rms_norm_eps)}
    weights = {"tok_embeddings": state["model.embed_tokens.weight"], "norm": state["model.norm.weight"],
               "output": state["lm_head.weight"]}
    for layer in range(config["n_layers"]):
        for hf_name, name in HF_LAYER_NAMES.items():
            weights[f"layers.{layer}.{name}"] = state[f"model.layers.{layer}.{hf_name}.weight"]
    return config, {k: v.detach().cpu().numpy() for k, v in weights.items()}


def wikitext_prompts(tokenizer, count: int, length: int) -> np.ndarray:
    """The first `length` tokens of the first `count` wikitext-103 test passages that are long enough."""
    from datasets import load_dataset

    prompts = []
    for record in load_dataset("wikitext", "wikitext-103-v1", split="test"):
        ids = tokenizer(record["text"])["input_ids"]
        if len(ids) >= length:
            prompts.append(ids[:length])
            if len(prompts) == count:
                return np.asarray(prompts, dtype=np.int64)
    raise RuntimeError(f"wikitext-103 test has fewer than {count} passages of {length} tokens")


def make_full(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Full variant: Llama-2-7B converted to weights.npz, 16 wikitext prompts of 128 tokens."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise RuntimeError("the full llama-inference data converts a Hugging Face checkpoint: "
                           "pip install transformers datasets on the machine that prepares it") from None
    tokenizer = AutoTokenizer.from_pretrained(FULL_CHECKPOINT)
    model = AutoModelForCausalLM.from_pretrained(FULL_CHECKPOINT, torch_dtype=torch.float16)
    config, weights = convert_checkpoint(model.state_dict(), model.config)
    prompts = wikitext_prompts(tokenizer, FULL_SHAPE["batch"], FULL_SHAPE["prompt_length"])
    write_public(public_dir, config, FULL_SHAPE["new_tokens"], weights, prompts)
    pathlib.Path(private_dir).mkdir(parents=True, exist_ok=True)
