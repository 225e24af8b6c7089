"""`validate` inside the sandbox: asks the gateway to check the submission file, prints the answer.

Copied into the sandbox as validate.py and run by the agent environment's interpreter; the
standard library only. Exit status 0 when the submission is valid, 1 when it is not.
"""
from __future__ import annotations

import json
import os
import sys
import urllib.request


def main() -> int:
    base = os.environ.get("MLAB_API_BASE", "http://127.0.0.1:4141/v1").rsplit("/v1", 1)[0]
    request = urllib.request.Request(base + "/mlab/validate", data=b"{}", method="POST",
                                     headers={"Authorization": "Bearer " + os.environ.get("MLAB_API_KEY", ""),
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            text = json.loads(response.read())["text"]
    except (OSError, ValueError, KeyError) as problem:
        print(f"validate: the gateway did not answer: {problem}", file=sys.stderr)
        return 2
    print(text)
    return 0 if " is valid" in text else 1


if __name__ == "__main__":
    sys.exit(main())
