"""coordd: a local daemon through which parallel coding agents post, claim and finish work."""

__version__ = "0.1.0"
