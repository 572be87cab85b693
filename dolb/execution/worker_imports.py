"""What a worker process needs before its first task, imported and initialised once in
a fork server (:mod:`dolb.execution.forkserver`), so that the workers forked from it
have it already: dolb's tasks (learners, data stores, result store) and Numba's
compiler, whose typing and target contexts take ~0.3 CPU s to set up in each process."""

from __future__ import annotations

import dolb.execution.payload
import dolb.execution.tasks
import dolb.execution.warm_up  # noqa: F401
from dolb.execution.worker_plugins import prepare_compiler

prepare_compiler()
