"""``theano.printing``: `debugprint` and `pprint` (also ``pp``) print bptt graphs."""
from bptt.printing import debugprint as debugprint, pprint as pprint

pp = pprint
