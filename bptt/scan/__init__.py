"""Loops in the graph: `scan` and its views, the `Scan` op and its `ScanInfo` layout."""
from .args import ScanArgs as ScanArgs
from .basic import scan as scan
from .info import ScanInfo as ScanInfo
from .op import Scan as Scan
from .plan import StoragePlan as StoragePlan
from .utils import ScanUpdates as ScanUpdates, until as until
from .views import foldl as foldl, foldr as foldr, map as map, reduce as reduce
from .profiling import ScanProfile as ScanProfile, profiles as profiles
