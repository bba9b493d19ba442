"""io.prefetch: the background producer keeps order and values, and hands its exceptions over."""

from __future__ import annotations

import pytest

from dpsynth.data.io import prefetch


def test_prefetch_keeps_order_and_values():
    assert list(prefetch(iter(range(1000)), depth=3)) == list(range(1000))


def test_prefetch_reraises_the_producers_exception_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise ValueError("boom")

    seen = []
    with pytest.raises(ValueError, match="^boom$"):
        for x in prefetch(items()):
            seen.append(x)  # noqa: PERF402  (the items before the exception)
    assert seen == [1, 2]


def test_prefetch_stops_its_producer_when_the_consumer_stops():
    produced = []

    def items():
        for i in range(10_000):
            produced.append(i)
            yield i

    gen = prefetch(items(), depth=2)
    assert next(gen) == 0
    gen.close()  # joins the producer thread: it must notice and stop, not block on a full queue
    assert len(produced) < 10
