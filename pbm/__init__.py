"""pbm: a play-by-email server for turn-based board games."""

from .web import create_app

__all__ = ["create_app"]
