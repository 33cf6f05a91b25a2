"""Card Arena: the server, tournaments, ratings, records and the ``arena`` command line.

The arena knows games only through :mod:`engine`'s interface.
"""
