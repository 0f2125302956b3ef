"""``theano.printing``: `debugprint` and `pprint` print bptt graphs."""
from bptt.printing import debugprint as debugprint


def pprint(obj):
    """A one-line description of a variable (Theano's pretty printer stands in)."""
    return str(obj)


pp = pprint
