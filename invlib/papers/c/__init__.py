"""Paper c."""
