"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit)."""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.488, b=0.000559, tau=0.040,
                        profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)
