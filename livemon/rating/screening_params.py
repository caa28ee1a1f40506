"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).

Fitted on the honest player-events of the fit events (512 with 20+ screened positions);
the held-back events of ``bench/calibration_split.py`` never entered it.
"""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.6116555070075234, b=0.0006120151675173851, tau=0.045968826361441936, g=0.00018997827351082316,
                        profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)

FIT_EVENTS = 32
"""The events the line was fitted on."""

BY_YEAR = {2020: (6, 0.078), 2021: (47, 0.013), 2022: (691, -0.16), 2025: (146, 0.274)}
"""Year -> (honest player-events with 20+ screened positions, their mean z), each read by a line that never
saw its event (a fit event by the line fitted without it, a held-back one by the shipped line): the era
that ``livemon analyse --screen`` puts under its table (:func:`livemon.rating.screening.era_line`)."""
