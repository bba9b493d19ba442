"""The papers' own experiments, one script per figure (``make bench-papers``); see README.md here."""
