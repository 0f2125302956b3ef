"""``theano.compat``: Python-version names Theano code reads."""
PY3 = True
