"""Serve the dashboard to a class: N Streamlit workers behind nginx with sticky sessions.

``python -m deploy --workers 2 --port 8080`` (see docs/serving.md, "Serving a class").
"""

from deploy.cluster import Cluster, nginx_path

__all__ = ["Cluster", "nginx_path"]
