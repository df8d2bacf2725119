"""Dollars as llm-do shows them: rounded up to the cent, so an amount shown as a bound or a budget
left is never less than the amount."""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

CENT = Decimal("0.01")


def usd(amount: Decimal) -> str:
    """`$1,234.57`, rounded up to the cent."""
    return f"${amount.quantize(CENT, rounding=ROUND_CEILING):,}"


def usd_left(amount: Decimal) -> str:
    """What is left of a budget, rounded down to the cent (never more than is left)."""
    return f"${max(amount, Decimal(0)).quantize(CENT, rounding=ROUND_FLOOR):,}"


def usd_json(amount: Decimal | None) -> str | None:
    """`1234.57` (a string: a JSON number would lose cents), rounded up; None stays None."""
    return None if amount is None else str(amount.quantize(CENT, rounding=ROUND_CEILING))
