"""Fixtures every test package may use: the Node bot's npm packages (tests/node_packages.py), the
C++ bot's build (tests/cpp_bot.py) and the Go stdio bot's (tests/go_bot.py)."""

pytest_plugins = ["tests.node_packages", "tests.cpp_bot", "tests.go_bot"]
