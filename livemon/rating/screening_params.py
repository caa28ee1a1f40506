"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).

Fitted on the honest player-events of the fit events (771 with 20+ screened positions);
the held-back events of ``bench/calibration_split.py`` never entered it.
"""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.6591682411068942, b=0.0006408872766508132, tau=0.0652823862691479, g=0.000164794194673093,
                        era=-0.031794017999206586, h=0.0001338266042734687, knee=1800.0,
                        profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)

FIT_EVENTS = 32
"""The events the line was fitted on."""

BY_YEAR = {2020: (6, 0.071), 2021: (47, 0.026), 2022: (950, -0.05), 2025: (10, 0.216)}
"""Year -> (honest player-events with 20+ screened positions, their mean z), each read by a line that never
saw its event and knows its era (a fit event by the line fitted without it, a held-back one by the shipped
line; a fit event whose other fit events are all of one era is left out: its line has no era term): the era
that ``livemon analyse --screen`` puts under its table (:func:`livemon.rating.screening.era_line`)."""
