"""Paper b."""
