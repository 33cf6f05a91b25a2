"""People at the table: a person's seat as a bridge between a browser page and the arena's
protocol (``arena play``; docs/play.md). The referee knows nothing of it: the bridge holds the
seat's connection as a bot would."""
