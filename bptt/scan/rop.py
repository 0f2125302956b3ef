"""Forward mode through a Scan (work in progress)."""


def scan_rop(op, inputs, eval_points):
    raise NotImplementedError("Rop of a Scan")
