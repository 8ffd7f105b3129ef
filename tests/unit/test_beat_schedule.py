"""The periodic tasks expire after ten of their periods in the queue: behind a backlog in the one
queue, at most ten sweeps wait, instead of an ever-growing pile of late sweeps each re-sending
every pending row; a merely slow queue still gets its sweeps."""
from workers.celery_app import PERIODS_QUEUED, make_celery


def test_every_periodic_task_expires_after_ten_periods_queued():
    schedule = make_celery().conf.beat_schedule
    assert {"sweep-outbox", "refresh-heat"} <= set(schedule)
    for name, entry in schedule.items():
        period = float(entry["schedule"])
        expires = entry.get("options", {}).get("expires")
        assert PERIODS_QUEUED == 10
        assert expires is not None and float(expires) == PERIODS_QUEUED * period, name
