"""Paper a."""
