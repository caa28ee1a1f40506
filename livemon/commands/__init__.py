"""Subcommands of the ``livemon`` CLI, one module each (``add_arguments``, ``run``)."""
