"""Shared helper of the resumable-experiment tests: stop a run part way."""

from __future__ import annotations

from typing import Any


def stop_at_call(monkeypatch, owner: Any, name: str, k: int | None = None) -> list:
    """Make ``owner.name`` raise ``KeyboardInterrupt`` (a stopped run) on its ``k``-th call
    (never with ``k=None``); returns the list that records the arguments of every call.
    Undo with ``monkeypatch.undo()``."""
    original = getattr(owner, name)
    calls: list = []

    def stopping(*args, **kwargs):
        calls.append(args)
        if len(calls) == k:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, stopping)
    return calls
