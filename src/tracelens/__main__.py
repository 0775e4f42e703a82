"""``python -m tracelens`` is the ``tracelens`` command."""

from .cli import main

main()
