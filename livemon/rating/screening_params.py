"""The screening line on today's FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).

Fitted on the honest player-events of the fit events (512 with 20+ screened positions);
the held-back events of ``bench/calibration_split.py`` never entered it.
"""

from livemon.rating.screening import ScreeningLine

SHIPPED = ScreeningLine(a=-0.6116555070075234, b=0.0006120151675173851, tau=0.045968826361441936, g=0.00018997827351082316,
                        profile='Stockfish 15.1 depth=12 multipv=4', book_moves=8, eval_bound=3.0)
