"""Events the host holds beside the ladder: knockouts, Swiss and heats (docs/hosting.md,
"Events"). ``config`` reads ``[[events]]``, ``brackets`` pairs and scores (pure), ``runner``
creates each round's units from the stored results and finishes the event."""
