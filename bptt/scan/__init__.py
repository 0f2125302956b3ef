"""Loops in the graph: `scan` and its views, the `Scan` op and its `ScanInfo` layout."""
from .info import ScanInfo as ScanInfo
from .op import Scan as Scan
from .utils import ScanUpdates as ScanUpdates, until as until
