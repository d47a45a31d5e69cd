"""The ``zcp`` command line. Each subcommand lives in its own module."""
