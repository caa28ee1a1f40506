#!/bin/sh
# Engine analyses of a plan's games on a machine lent for a few minutes (many cores, no network, no Stockfish, no
# python-chess there): what travels, and the one command to run there (bench/analyse_games.py on every core).
#
#   here:   sh bench/lent_machine.sh prepare PLAN.jsonl
#           .dev/ (ignored by git): Stockfish xz-compressed, python-chess's pure-Python package, the plan
#   there:  sh bench/lent_machine.sh run SECONDS OUTDIR      (in the repository's root, .dev/ carried along)
#           OUTDIR/analyses.jsonl.gz, an export of every game finished, and its .partial (one line a game)
#
# PLAN.jsonl is what `python bench/calibration_split.py plan-... OUTDIR --skip bench/data/calibration_d12*.jsonl.gz`
# writes as OUTDIR/plan.jsonl. SECONDS is when to stop taking games (the games in flight then finish: leave a
# minute for them). Back here, bench/analyse_games.py --merge makes an export of a .partial alone.
set -eu
case "${1:-}" in
prepare)
    plan=$2
    mkdir -p .dev/site
    grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
    python3 -c 'import chess, os; print(os.path.dirname(chess.__file__))' >/dev/null 2>&1 || {
        echo "python-chess is not importable by python3 here (activate the venv)" >&2; exit 2; }
    rm -rf .dev/site/chess
    cp -r "$(python3 -c 'import chess, os; print(os.path.dirname(chess.__file__))')" .dev/site/chess
    rm -rf .dev/site/chess/__pycache__
    engine=$(command -v stockfish || echo /usr/games/stockfish)
    xz -T0 -6 -c "$engine" > .dev/stockfish.xz
    cp "$plan" .dev/plan.jsonl
    echo "$(wc -l < .dev/plan.jsonl) games planned; .dev/ holds $(du -sh .dev | cut -f1) (carry it: .dev)"
    ;;
run)
    seconds=$2
    out=$3
    python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('.dev/stockfish.xz'), open('/tmp/stockfish', 'wb'))"
    chmod +x /tmp/stockfish
    echo quit | /tmp/stockfish | head -1
    PYTHONPATH=.dev/site PYTHONUNBUFFERED=1 python3 bench/analyse_games.py .dev/plan.jsonl \
        --out "$out/analyses.jsonl.gz" --jobs "$(nproc)" --seconds "$seconds" --engine /tmp/stockfish
    ;;
*)
    echo "usage: sh bench/lent_machine.sh prepare PLAN.jsonl | run SECONDS OUTDIR" >&2
    exit 2
    ;;
esac
