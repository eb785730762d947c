"""The Flask application factory."""

from __future__ import annotations

import secrets
from pathlib import Path

from flask import Flask, jsonify, render_template, request

from ..config import load_settings
from ..service import Service


def _secret_key(settings) -> str:
    """The configured key, or one made once and kept under instance/."""
    if settings.secret_key:
        return settings.secret_key
    path = Path(settings.instance_path) / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def create_app(overrides: dict | None = None) -> Flask:
    """Build the application; settings in ``overrides`` win over the environment."""
    settings = load_settings(overrides)
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=_secret_key(settings),
        # The whole request may hold a 10 MB mail plus its form encoding.
        MAX_CONTENT_LENGTH=settings.max_message_bytes + 256 * 1024,
        PBM_SETTINGS=settings,
    )
    app.extensions["pbm"] = Service(settings)

    from .inbound import bp as inbound_bp
    from .pages import bp as pages_bp

    app.register_blueprint(inbound_bp)
    app.register_blueprint(pages_bp)

    def wants_json() -> bool:
        return request.path.startswith("/inbound") or request.path.endswith(".json")

    @app.errorhandler(400)
    @app.errorhandler(401)
    @app.errorhandler(403)
    @app.errorhandler(404)
    @app.errorhandler(405)
    @app.errorhandler(413)
    def client_error(error):
        if wants_json():
            return jsonify(status="error", error=error.description), error.code
        return render_template("error.html", code=error.code, message=error.description), error.code

    @app.errorhandler(500)
    def server_error(error):
        app.logger.error("internal error on %s", request.path)
        if wants_json():
            return jsonify(status="error", error="The server failed; try again later."), 503
        return render_template("error.html", code=503, message="The server failed; try again later."), 503

    return app
