"""Task: L4 consolidation per conversation (the build: `app.services.consolidation_build`: in full or extending its state)."""
from __future__ import annotations

from workers.celery_app import celery
from workers.layerbase import make_task

consolidate_events = make_task(celery, "consolidate")
