"""Task: L0 speaker engrams per conversation (the build: `app.services.builds.build_engrams`)."""
from __future__ import annotations

from workers.celery_app import celery
from workers.layerbase import make_task

build_engrams = make_task(celery, "engrams")
