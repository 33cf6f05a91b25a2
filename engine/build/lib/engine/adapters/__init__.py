"""Adapters from the engine to other libraries' APIs, for learning code.

Each module needs an optional extra (``pip install -e '.[rl]'``): ``pettingzoo_env`` (a
PettingZoo AEC environment per game) and ``openspiel_game`` (an OpenSpiel game). The engine
itself never imports them, so it runs without those libraries.
"""
