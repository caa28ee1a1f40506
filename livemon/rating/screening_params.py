"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).

Fitted on the honest player-events of the fit events (771 with 20+ screened positions);
the held-back events of ``bench/calibration_split.py`` never entered it.
"""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.6453140693105062, b=0.0006373799001943857, tau=0.06525078309930298, g=0.00018195142005439683,
                        era=-0.03784271433822251, profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)

FIT_EVENTS = 32
"""The events the line was fitted on."""

BY_YEAR = {2020: (6, 0.086), 2021: (47, 0.034), 2022: (950, -0.048), 2025: (10, 0.169)}
"""Year -> (honest player-events with 20+ screened positions, their mean z), each read by a line that never
saw its event and knows its era (a fit event by the line fitted without it, a held-back one by the shipped
line; a fit event whose other fit events are all of one era is left out: its line has no era term): the era
that ``livemon analyse --screen`` puts under its table (:func:`livemon.rating.screening.era_line`)."""
