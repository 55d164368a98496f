"""Headless subcommands of ``attention-lab``.

Each module in COMMANDS has NAME, HELP, ``add_arguments(parser)`` and ``run(args) -> int``. A user
error is raised as ValueError or OSError with a one-line message; main() prints it and exits 2.
"""

from app.commands import bench, heads, induction, models, predict, smoke

COMMANDS = [smoke, heads, predict, models, bench, induction]
