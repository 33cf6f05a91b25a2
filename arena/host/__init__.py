"""The competition service (`arena host`): submissions, validation, the ladder and the final,
the HTTP API and its client (docs/hosting.md)."""
