"""The typed AST of .mlab files: frozen dataclasses, one per grammar rule.

Class names follow the rule names of grammars/mlab.lark (CamelCase of the
snake_case rule). Every node carries the Span it came from. The nodes live in
five modules (values and the entry base, task entries, agent entries, experiment
entries, declarations); this package is their one name, `mlabc.ast`.
"""
from . import base, task, agent, experiment, module
from .base import *  # noqa: F401,F403
from .task import *  # noqa: F401,F403
from .agent import *  # noqa: F401,F403
from .experiment import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403

__all__ = [name for part in (base, task, agent, experiment, module) for name in part.__all__]
