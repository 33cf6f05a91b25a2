"""The arena's web assets: the replay viewer (static/viewer.js, static/viewer.css), shared by
`arena replay html` pages and the competition's web pages."""
