"""Helpers of the search tests (imported by name: the search conftest puts this folder on sys.path):
a hand-made tree-search agent's search block and templates, shaped like the compiled IR (contract
section 4), node scripts and replies."""
from __future__ import annotations

TEMPLATES = {
    "draft": "Draft node {{ node }} of at most {{ max_nodes }} for {{ task.title }}.\n"
             "Data:\n{{ data_preview }}\nBest so far:\n{{ journal }}\nWrite {{ code_file }}.\n",
    "improve": "Improve node {{ node }}: plan {{ parent.plan }}; {{ parent.validation }}\n{{ parent.code }}\n"
               "{{ journal }}\n",
    "debug": "Debug node {{ node }}: output {{ parent.output }}\n{{ parent.code }}\n",
    "review": "Review {{ code_file }} of {{ task.name }}:\n{{ code }}\nOutput:\n{{ output }}\n",
    "format_error": "Format problem: {{ error }} (write {{ code_file }})\n",
}
PATTERN = r"validation mae: ([0-9.]+)"


def search_block(**overrides) -> dict:
    block = {"policy": "greedy", "params": {"drafts": 2, "debug_probability": 0.5, "max_debug_depth": 3},
             "parallel": 1, "code_file": "train.py",
             "score": {"from": "pattern", "pattern": PATTERN, "group": 1},
             "select": "validation", "operators": ["draft", "improve", "debug"]}
    block.update(overrides)
    return block


def reply(plan: str, code: str) -> str:
    return f"{plan}\n\n```python\n{code}```\n"


def valid_code(mae: float, note: str = "") -> str:
    """A script that writes a valid constant submission and prints its made-up validation error."""
    return ("import csv\n"
            "ids = [row['Id'] for row in csv.DictReader(open('test.csv'))]\n"
            "with open('submission.csv', 'w') as out:\n"
            "    out.write('Id,SalePrice\\n' + ''.join(f'{i},180000.0\\n' for i in ids))\n"
            f"print('{note}')\n"
            f"print('validation mae: {mae}')\n")


BROKEN_CODE = "raise SystemExit('broken on purpose')\n"
NO_SUBMISSION_CODE = "print('validation mae: 1.0')\n"  # a fine score, but nothing submitted


def client_resumed(make_client, replies: list, records: list[dict]):
    """A scripted client moved past the replies the recorded calls used (as `mlab run --resume` does)."""
    client = make_client(replies)
    used = sum(len((r.get("model") or {}).get("calls", [])) for r in records)
    client.offline.set_position(client.tiers["main"].model, "main", used)
    return client


def tiers_of(client) -> dict:
    return {tier: {"model": config.model, "params": {}, "source": "option"} for tier, config in client.tiers.items()}
