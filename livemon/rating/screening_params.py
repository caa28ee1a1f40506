"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).

Fitted on the honest player-events of the fit events (532 with 20+ screened positions);
the held-back events of ``bench/calibration_split.py`` never entered it.
"""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.6622337761374315, b=0.000645164377935108, tau=0.04639500029691299, g=0.00023377655405270304,
                        era=-0.038594241170515124, profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)

FIT_EVENTS = 32
"""The events the line was fitted on."""

BY_YEAR = {2020: (6, 0.055), 2021: (47, 0.012), 2022: (711, -0.08), 2025: (10, 0.16)}
"""Year -> (honest player-events with 20+ screened positions, their mean z), each read by a line that never
saw its event and knows its era (a fit event by the line fitted without it, a held-back one by the shipped
line; a fit event whose other fit events are all of one era is left out: its line has no era term): the era
that ``livemon analyse --screen`` puts under its table (:func:`livemon.rating.screening.era_line`)."""
