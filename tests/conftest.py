"""Fixtures every test package may use: the Node bot's npm packages (tests/node_packages.py)."""

pytest_plugins = ["tests.node_packages"]
