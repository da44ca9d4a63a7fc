"""The sample class: filled-in submissions, the hostile and damaged students, the demo."""
