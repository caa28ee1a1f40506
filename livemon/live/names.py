"""Player names as chess files spell them: one player under several spellings.

PGN tags name a player surname first (FIDE's order, ``"Carlsen, Magnus"``), but feeds and the lists an organiser
writes do not all spell a name alike: ``"Carlsen,M"``, ``"CARLSEN, Magnus"``, ``"Carlsén, M."``. Two spellings
name the same player when their surnames are equal and their given names agree as far as both go, a name or its
start (an initial, TWIC's ``"Adams,Mi"``), accents, case and punctuation left out. A name without a comma is read
surname last, or surname first. Matching is conservative: a spelling that fits two players of a field fits
neither (:func:`matches`).

>>> same_player("Carlsen, Magnus", "Carlsen,M")
True
>>> same_player("Hernandez, Cristian Andres", "HERNÁNDEZ, C. A.")
True
>>> same_player("Carlsen, Magnus", "Carlsen, Henrik")
False
>>> same_player("Magnus Carlsen", "Carlsen, M")
True
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

__all__ = ["matches", "name_readings", "same_player"]

_TOKEN = re.compile(r"[^\W\d_]+")


def _fold(text: str) -> list[str]:
    """Words of ``text`` without accents, case or punctuation.

    >>> _fold("  Ó'Brien-Smith, J.-P. ")
    ['obrien', 'smith', 'j', 'p']
    """
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _TOKEN.findall(plain.replace("'", "").replace("\u2019", "").casefold())


@functools.lru_cache(maxsize=65536)
def name_readings(name: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """The (surname, given names) a spelling can mean: one reading with a comma, else surname last or first
    (each name folded once: a field's names are compared with every listed one).

    >>> name_readings("Carlsen, Magnus")
    ((('carlsen',), ('magnus',)),)
    >>> name_readings("Magnus Carlsen")
    ((('carlsen',), ('magnus',)), (('magnus',), ('carlsen',)))
    """
    if "," in name:
        surname, _, given = name.partition(",")
        return ((tuple(_fold(surname)), tuple(_fold(given))),)
    words = _fold(name)
    if len(words) < 2:
        return ((tuple(words), ()),)
    return ((tuple(words[-1:]), tuple(words[:-1])), (tuple(words[:1]), tuple(words[1:])))


def _given_agree(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Given names agree as far as both go, each word the other's or its start (an initial, TWIC's "Mi", "Hi").

    >>> _given_agree(("mi",), ("michael",)), _given_agree(("m",), ("magnus", "oen")), _given_agree(("l",), ("n",))
    (True, True, False)
    """
    return all(x.startswith(y) or y.startswith(x) for x, y in zip(a, b))


def same_player(a: str, b: str) -> bool:
    """Whether two spellings can name the same player (module docstring)."""
    if a == b:
        return True
    return any(sa == sb and sa and _given_agree(ga, gb)
               for sa, ga in name_readings(a) for sb, gb in name_readings(b))


def matches(name: str, names: Sequence[str]) -> list[int]:
    """The indexes in ``names`` of the player ``name`` spells: the one spelled alike, else every one it can name
    (:func:`same_player`; more than one: the spelling does not tell them apart).

    >>> field = ["Carlsen, Magnus", "Li, Wei", "Li, Wen"]
    >>> matches("Carlsen,M", field), matches("Li, W", field), matches("Li, Wei", field), matches("Caruana, F", field)
    ([0], [1, 2], [1], [])
    """
    exact = [i for i, other in enumerate(names) if other == name]
    return exact or [i for i, other in enumerate(names) if same_player(name, other)]
