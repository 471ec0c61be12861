"""Built-in suites, written in the public format of :mod:`irdiff.suite` (a user's file looks the same)."""
