"""The one error type of ``gradcode.recommend``: bad input to ``recommend``, as one line."""

from __future__ import annotations

from gradcode.errors import UserError


class RecommendError(UserError):
    """A bad argument of ``recommend`` (a limit, a count, ``n`` against the model's workers)."""
