"""twincache.suite.errors — the suite's two exceptions (every message names
the cell, graph, key or file)."""
from ..errors import Error, InvalidArgument


class SuiteError(Error):
    """A suite cannot be built, checked or scored: the message names the cell,
    graph or file."""


class UnknownCell(SuiteError, InvalidArgument):
    """A cell name the recipe does not hold (the command line exits 2)."""
