"""Fixtures every test package may use: the Node bot's npm packages (tests/node_packages.py) and
the C++ bot's build (tests/cpp_bot.py)."""

pytest_plugins = ["tests.node_packages", "tests.cpp_bot"]
