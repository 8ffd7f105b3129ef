"""Task: L5 surprise and importance per conversation (the build: `app.services.builds.build_surprise`)."""
from __future__ import annotations

from workers.celery_app import celery
from workers.layerbase import make_task

score_surprise = make_task(celery, "surprise")
