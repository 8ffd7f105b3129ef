"""Task: the encoding gate's second half, prediction error over the stored vectors, for tenants
whose gate is on (the build: `app.services.builds.build_gate`; re-gating stored events is
`app.services.regate`)."""
from __future__ import annotations

from workers.celery_app import celery
from workers.layerbase import make_task

gate_events = make_task(celery, "gate")
