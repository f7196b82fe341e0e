"""Shared helpers of the resumable-experiment tests: stop a run part way, run it again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def stop_at_call(monkeypatch, owner: Any, name: str, k: int | None = None) -> list:
    """Make ``owner.name`` raise ``KeyboardInterrupt`` (a stopped run) on its ``k``-th call
    (never with ``k=None``); returns the list that records the arguments of every call."""
    original = getattr(owner, name)
    calls: list = []

    def stopping(*args, **kwargs):
        calls.append(args)
        if len(calls) == k:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, stopping)
    return calls


def stop_then_resume(monkeypatch, owner: Any, name: str, run: Callable[[], Any]):
    """``run()`` stopped at the second call of ``owner.name`` (the unit of work), then
    ``run()`` again to the end; returns the second run's calls of ``owner.name`` (their
    arguments) and its result."""
    with monkeypatch.context() as mp:
        stop_at_call(mp, owner, name, k=2)
        with pytest.raises(KeyboardInterrupt):
            run()
    with monkeypatch.context() as mp:
        calls = stop_at_call(mp, owner, name)
        return calls, run()
