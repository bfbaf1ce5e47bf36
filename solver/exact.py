"""The one module that imports gmpy2: exact integers and rationals, and their text forms.

Every exact answer of `ladders` is an ``mpq``. The big solves keep integer rows
(``mpz``) and only build a fraction at the very end. Python's own ``int`` refuses to
print more than 4,300 digits by default; ``mpz`` has no such limit, so every exact
number is turned into text here.
"""

from __future__ import annotations

import math

import gmpy2
from gmpy2 import mpq, mpz

__all__ = [
    "mpq",
    "mpz",
    "gcd",
    "isqrt",
    "next_prime",
    "prev_prime",
    "invert",
    "is_prime",
    "f_divmod",
    "fraction_to_str",
    "str_to_fraction",
    "fraction_to_decimal",
    "ratio_to_decimal",
    "sqrt_to_decimal",
    "digit_counts",
    "mpz_to_bytes",
    "mpz_from_bytes",
]

gcd = gmpy2.gcd
isqrt = gmpy2.isqrt
next_prime = gmpy2.next_prime
prev_prime = gmpy2.prev_prime
invert = gmpy2.invert
is_prime = gmpy2.is_prime
f_divmod = gmpy2.f_divmod


def fraction_to_str(value: mpq | mpz | int) -> str:
    """Exact text of a rational: ``"p/q"`` in lowest terms, or ``"p"`` for an integer."""
    q = mpq(value)
    if q.denominator == 1:
        return str(q.numerator)
    return f"{q.numerator}/{q.denominator}"


def str_to_fraction(text: str) -> mpq:
    """Parse ``"p/q"`` or ``"p"`` (as written by :func:`fraction_to_str`) into an ``mpq``.

    Raises ValueError with the offending text when it is not of that form.
    """
    parts = text.strip().split("/")
    try:
        if len(parts) == 1:
            return mpq(mpz(parts[0]))
        if len(parts) == 2:
            return mpq(mpz(parts[0]), mpz(parts[1]))
    except (ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"not an exact fraction 'p/q': {text[:60]!r}") from exc
    raise ValueError(f"not an exact fraction 'p/q': {text[:60]!r}")


def fraction_to_decimal(value: mpq | mpz | int, digits: int = 50) -> str:
    """Decimal text of a rational, truncated (not rounded) to ``digits`` places.

    Truncation keeps every printed digit a true digit of the exact value, which is
    what "the decimal digits agree" means when results are verified.
    """
    q = mpq(value)
    return ratio_to_decimal(q.numerator, q.denominator, digits)


def ratio_to_decimal(numerator: mpz | int, denominator: mpz | int, digits: int = 50) -> str:
    """:func:`fraction_to_decimal` of ``numerator / denominator`` (denominator > 0), with
    no fraction built: no gcd, where only the decimals are wanted."""
    sign = "-" if numerator < 0 else ""
    scaled = abs(mpz(numerator)) * mpz(10) ** digits // denominator
    whole, frac = divmod(scaled, mpz(10) ** digits)
    if digits == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{str(frac).zfill(digits)}"


def sqrt_to_decimal(value: mpq | mpz | int, digits: int = 20) -> str:
    """Decimal text of ``sqrt(value)`` truncated to ``digits`` places (value >= 0), e.g. an sd."""
    q = mpq(value)
    if q < 0:
        raise ValueError("square root of a negative number")
    root = gmpy2.isqrt(q.numerator * mpz(10) ** (2 * digits) // q.denominator)
    whole, frac = divmod(root, mpz(10) ** digits)
    return f"{whole}.{str(frac).zfill(digits)}" if digits else str(whole)


def mpz_to_bytes(value: mpz) -> bytes:
    """Compact binary form of an integer (sign included), for checkpoint segments."""
    return gmpy2.to_binary(value)


def mpz_from_bytes(data: bytes) -> mpz:
    """Inverse of :func:`mpz_to_bytes`."""
    return gmpy2.from_binary(data)


def digit_counts(value: mpq) -> dict[str, int]:
    """Number of decimal digits of the numerator and denominator of ``value``."""
    q = mpq(value)
    return {
        "numerator": len(str(abs(q.numerator))),
        "denominator": len(str(q.denominator)),
    }


def bits_to_digits(bits: int) -> int:
    """Decimal digits of a number of ``bits`` bits (rounded up)."""
    return math.ceil(bits * math.log10(2)) if bits else 0
