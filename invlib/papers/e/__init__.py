"""Paper e."""
