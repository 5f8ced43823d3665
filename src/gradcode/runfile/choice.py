"""A way a run chose and why (``summary.json``'s ``collection`` and ``distribution``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    """The way chosen, why, and (where the choice compared predictions) what each way's
    prediction was, in seconds."""

    way: str
    reason: str
    predicted: dict[str, float] | None = None

    def as_dict(self) -> dict[str, object]:
        found: dict[str, object] = {"way": self.way, "reason": self.reason}
        if self.predicted is not None:
            found["predicted_seconds"] = self.predicted
        return found
