"""The periodic tasks expire within their own period: behind a backlog in the one queue, a sweep
that could not start in time is dropped (the next one comes), instead of a pile of late sweeps
each re-sending every pending row."""
from workers.celery_app import make_celery


def test_every_periodic_task_expires_within_its_period():
    schedule = make_celery().conf.beat_schedule
    assert {"sweep-outbox", "refresh-heat"} <= set(schedule)
    for name, entry in schedule.items():
        period = float(entry["schedule"])
        expires = entry.get("options", {}).get("expires")
        assert expires is not None and 0 < float(expires) <= period, name
