"""Starting bots and keeping them in their boxes: one seat's bot as a process or a container.

Modules: ``command`` (a bot's shell command checked before it is stored or run), ``logs`` (a
bot's output, capped on its way to the seat's log), ``sandbox`` (bubblewrap and cgroups for
commands), ``reaper`` (a run's cgroups and temporary directory, and the process that removes
them, and kills what is left in them, once the arena is gone), ``process`` (a command as a
process group), ``docker`` (an image as a locked-down container), ``launch`` (which of these a
seat gets, and the check of commands inside their box). May use: ``arena.errors``,
``arena.layout``; knows nothing of the server or the protocol.
"""
