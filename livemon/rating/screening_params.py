"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).

Fitted on the honest player-events of the fit events (872 with 20+ screened positions);
the held-back events of ``bench/calibration_split.py`` never entered it.
"""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.6521772235814572, b=0.0006365903816891355, tau=0.06717381688300247, g=0.00013966445037224125,
                        era=-0.032739347550397875, h=0.00017404378498094274, knee=1800.0, rapid=-0.07796438742823497,
                        profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)

FIT_EVENTS = 32
"""The events the line was fitted on."""

BY_YEAR = {2020: (6, 0.121), 2021: (47, 0.055), 2022: (1051, -0.05), 2025: (10, 0.239)}
"""Year -> (honest player-events with 20+ screened positions, their mean z), each read by a line that never
saw its event and knows its era (a fit event by the line fitted without it, a held-back one by the shipped
line; a fit event whose other fit events are all of one era is left out: its line has no era term): the era
that ``livemon analyse --screen`` puts under its table (:func:`livemon.rating.screening.era_line`)."""
