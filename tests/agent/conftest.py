import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _fresh_offline_models():
    from mlab import offline_models

    offline_models.reset()
    offline_models.configure_demo(None)
    yield
    offline_models.reset()
