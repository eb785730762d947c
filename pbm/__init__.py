"""pbm: a play-by-email server for turn-based board games."""


def create_app(overrides: dict | None = None):
    """The Flask application (``pbm.web.create_app``), imported only when asked for,
    so that the command line (``pbm ingest`` for every mail an MTA pipes) does not
    load the web half."""
    from .web import create_app as make_app

    return make_app(overrides)


__all__ = ["create_app"]
