"""Task: the memory graph per conversation (the build: `app.services.graph_build.build_graph`)."""
from __future__ import annotations

from workers.celery_app import celery
from workers.layerbase import make_task

build_graph = make_task(celery, "graph")
