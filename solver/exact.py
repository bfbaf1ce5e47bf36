"""The one module that imports gmpy2: exact integers and rationals, and their text forms.

Every exact answer of `ladders` is an ``mpq``. The big solves keep integer rows
(``mpz``) and only build a fraction at the very end; ``xmpz`` (mutable: ``+=`` in place)
serves the walks whose steps are many additions of big numbers. Python's own ``int`` refuses to
print more than 4,300 digits by default; ``mpz`` has no such limit, so every exact
number is turned into text here.
"""

from __future__ import annotations

import functools
import math
import random
from fractions import Fraction
from collections.abc import Hashable, Iterator, Mapping, Sequence
from concurrent.futures import Executor

import gmpy2
from gmpy2 import mpq, mpz, xmpz

__all__ = [
    "mpq",
    "mpz",
    "xmpz",
    "gcd",
    "isqrt",
    "next_prime",
    "prev_prime",
    "invert",
    "is_prime",
    "f_divmod",
    "f_mod_2exp",
    "fraction_to_str",
    "str_to_fraction",
    "fraction_to_decimal",
    "ratio_to_decimal",
    "sqrt_to_decimal",
    "digit_counts",
    "mpz_to_bytes",
    "mpz_from_bytes",
    "lowest_terms",
    "coprime_mpq",
    "FractionTable",
    "release_gil",
    "releasing_gil",
]

gcd = gmpy2.gcd
isqrt = gmpy2.isqrt
next_prime = gmpy2.next_prime
prev_prime = gmpy2.prev_prime
invert = gmpy2.invert
is_prime = gmpy2.is_prime
f_divmod = gmpy2.f_divmod
f_mod_2exp = gmpy2.f_mod_2exp


def release_gil() -> None:
    """Let gmpy2 drop the interpreter lock inside this thread's big-integer operations
    from now on, so that threads doing them run side by side (a setting of the thread's
    own context: each thread asks for itself; a thread pool's initializer)."""
    gmpy2.get_context().allow_release_gil = True


def releasing_gil() -> gmpy2.context:
    """The same for the current thread inside a ``with`` block only."""
    return gmpy2.context(gmpy2.get_context(), allow_release_gil=True)


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


#: Primes below this bound make up the smooth part of a denominator in :func:`lowest_terms`.
SMOOTH_BOUND = 1 << 16
#: Entries of :func:`lowest_terms` whose gcd with the rough part is computed in full, to
#: find the few divisors that the others share.
SAMPLE = 256
#: More distinct divisors than this in the sample: :func:`lowest_terms` takes one gcd per entry.
MAX_DIVISORS = 8

@functools.cache
def _primorial() -> mpz:
    """The product of the primes below :data:`SMOOTH_BOUND`."""
    product, p = mpz(1), mpz(2)
    while p < SMOOTH_BOUND:
        product *= p
        p = gmpy2.next_prime(p)
    return product


def _split_smooth(den: mpz) -> tuple[mpz, mpz]:
    """``den = S R`` with S made of the primes below :data:`SMOOTH_BOUND` (with their
    multiplicities) and R of the others, so that ``gcd(S, R) = 1``.

    ``g``, the product of the small primes still in R, comes out as a whole power at a
    time (``gmpy2.remove``, by repeated squaring), so the loop runs once per distinct
    multiplicity, not once per factor: three players' multiple of the denominator has
    ``6^e`` with e in the thousands, which took 9,500 divisions of 614,000 bits (0.6 s)
    one factor at a time."""
    smooth, rough = mpz(1), mpz(den)
    g = gcd(rough, _primorial())
    while g > 1:
        rough, times = gmpy2.remove(rough, g)
        smooth *= g ** times
        g = gcd(rough, g)
    return smooth, rough


def lowest_terms(numerators: Sequence[mpz | int], den: mpz | int, *, sample: int = SAMPLE,
                 seed: int = 0, pool: Executor | None = None,
                 ways: int = 1) -> tuple[list[mpz], list[mpz]]:
    """Every ``numerators[i] / den`` (``den > 0``) in lowest terms: ``(p_i, q_i)`` lists,
    equal denominators shared as one object.

    Building the ``mpq`` would take one gcd of the full size per fraction (gmpy2
    canonicalizes every fraction it makes); a table's fractions over one common
    denominator share their factors, so most of that work can be shared. Write
    ``den = S R`` with S the part made of primes below 2^16 and ``gcd(S, R) = 1``; then
    ``gcd(N_i, den) = gcd(N_i mod S, S) gcd(N_i, R)``, and the first factor is cheap.
    For the second: the distinct values h of ``gcd(N_s, R)`` over a sample of entries
    are candidates; each entry takes the largest candidate that divides it (a division
    with a small quotient or a small divisor: cheap), so ``h_i`` divides
    ``gcd(N_i, R)``. Equality is then proved for a whole class at once: with
    ``R_h = R / h``, ``gcd(prod_i (N_i / h) mod R_h, R_h) = 1`` holds iff no prime of
    ``R_h`` divides any ``N_i / h``, i.e. iff ``gcd(N_i, R) = h`` for every entry of
    the class. A class that fails (a divisor the sample missed) falls back to one gcd
    per entry, as do inputs with more than :data:`MAX_DIVISORS` candidates, so the
    result is always exact; only the time depends on the sample.

    On ``hasbro``'s two-player table (6,561 numerators over a 14,794-bit common
    denominator; 100 distinct denominators after reduction) this takes about a quarter
    of the 0.87 s that 6,561 ``mpq`` cost. With ``pool`` (threads whose gmpy2 lets go of
    the interpreter lock), a class is proven in ``ways`` parts side by side, each its own
    product and gcd (a part's members are coprime to ``R_h`` iff its product is): at
    five players' full size two gcds of 300 million bits at once (86 s each here)
    instead of a longer product and one gcd after it.
    """
    den = mpz(den)
    if den <= 0:
        raise ValueError("lowest_terms needs a positive common denominator")
    smooth, rough = _split_smooth(den)
    nums = [mpz(v) for v in numerators]
    hs = [mpz(1)] * len(nums)
    if rough > 1 and nums:
        rng = random.Random(seed)
        picked = rng.sample(range(len(nums)), min(sample, len(nums)))
        divisors = sorted({gcd(nums[i], rough) for i in picked if nums[i]} - {1},
                          key=lambda h: -h.bit_length())
        if len(divisors) > MAX_DIVISORS:
            hs = [gcd(v, rough) for v in nums]
        else:
            classes: dict[mpz, list[int]] = {}
            for i, v in enumerate(nums):
                h = next((h for h in divisors if not v % h), mpz(1)) if v else rough
                hs[i] = h
                classes.setdefault(h, []).append(i)
            for h, members in classes.items():
                cofactor = rough // h
                if cofactor == 1:
                    continue
                parts = [members[k::ways] for k in range(min(ways, len(members)))] \
                    if pool is not None else [members]

                def proven(part: list[int], h: mpz = h, cofactor: mpz = cofactor) -> bool:
                    return gcd(_product_mod([nums[i] // h for i in part], cofactor), cofactor) == 1

                for part, ok in zip(parts, map(proven, parts) if pool is None
                                    else pool.map(proven, parts)):
                    if not ok:
                        for i in part:
                            hs[i] = gcd(nums[i], rough)
    out_num: list[mpz] = []
    out_den: list[mpz] = []
    reduced: dict[mpz, mpz] = {}
    for v, h in zip(nums, hs):
        g = h * gcd(v % smooth, smooth) if v else den
        q = reduced.get(g)
        if q is None:
            q = reduced[g] = den // g
        out_num.append(v // g)
        out_den.append(q)
    return out_num, out_den


def _product_mod(values: list[mpz], modulus: mpz) -> mpz:
    """``prod values mod modulus`` (1 for none), pairwise."""
    level = [v % modulus for v in values] or [mpz(1) % modulus]
    while len(level) > 1:
        up = [x * y % modulus for x, y in zip(level[0:-1:2], level[1::2])]
        level = up + level[2 * len(up):]
    return level[0]


def coprime_mpq(num: mpz | int, den: mpz | int) -> mpq:
    """``num / den`` as an ``mpq``, for a pair already known to be in lowest terms
    (``den > 0``; :func:`lowest_terms` proves it for many at once), without the gcd that
    ``mpq(num, den)`` takes: about a minute at 300 million bits.

    gmpy2 makes an ``mpq`` from a :class:`fractions.Fraction` by copying its numerator and
    denominator, relying on a Fraction's own invariant (lowest terms). The Fraction is
    made here without its gcd (its two fields set directly; Python's ``Fraction`` keeps
    them in ``__slots__`` from 3.11 on). Should gmpy2 ever reduce it after all, the
    result is still the same number, only slower.
    """
    if den <= 0:
        raise ValueError("coprime_mpq needs a positive denominator")
    fraction = Fraction.__new__(Fraction)
    fraction._numerator, fraction._denominator = int(num), int(den)
    return mpq(fraction)


class FractionTable(Mapping[Hashable, mpq]):
    """Exact fractions in lowest terms under keys, kept as numerator and denominator.

    ``table[key]`` is an ``mpq`` (made on access); :meth:`texts` gives the decimal texts
    of every numerator and denominator without making a fraction (the numerators' texts
    may be given: a caller may have made them on other cores).
    """

    def __init__(self, keys: Sequence[Hashable], numerators: Sequence[mpz],
                 denominators: Sequence[mpz], numerator_texts: Sequence[str] | None = None) -> None:
        if not len(keys) == len(numerators) == len(denominators) or (
                numerator_texts is not None and len(numerator_texts) != len(keys)):
            raise ValueError("a FractionTable needs one numerator, denominator (and text) per key")
        self._index = {k: i for i, k in enumerate(keys)}
        self._num = list(numerators)
        self._den = list(denominators)
        self._num_texts = numerator_texts

    @classmethod
    def from_values(cls, values: Mapping[Hashable, mpq]) -> FractionTable:
        """The table of a mapping of fractions."""
        fractions = [mpq(v) for v in values.values()]
        return cls(list(values), [v.numerator for v in fractions], [v.denominator for v in fractions])

    def __getitem__(self, key: Hashable) -> mpq:
        i = self._index[key]
        return mpq(self._num[i], self._den[i])

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def texts(self) -> Iterator[tuple[Hashable, str, str | None]]:
        """``(key, p, q)`` for every entry in key order: the decimal texts of its numerator
        and denominator in lowest terms (q None for an integer). Each distinct
        denominator is converted once: a big table shares few (100 among ``hasbro``'s
        6,561 entries)."""
        decimal: dict[mpz, str] = {}
        for key in sorted(self._index):
            i = self._index[key]
            p = self._num_texts[i] if self._num_texts is not None else str(self._num[i])
            q = self._den[i]
            if q == 1:
                yield key, p, None
                continue
            text = decimal.get(q)
            if text is None:
                text = decimal[q] = str(q)
            yield key, p, text
