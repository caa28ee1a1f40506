"""The game tracker: snapshots of games in, new messages out — the one conversion of a feed's games
(and of every PGN game ``analyse`` reads) into the core's messages.

No sockets, no files, no asyncio (like h11): every adapter hands the
:class:`GameTracker` what it currently knows about a game -- the whole PGN of
it, or a list of plies -- and the tracker answers with only what is new:

* :class:`~livemon.live.messages.GameInfo` the first time a game is seen;
* one :class:`~livemon.live.messages.MoveEvent` per new ply;
* :class:`~livemon.live.messages.GameRollback` then the new plies when the moves
  changed (a correction);
* :class:`~livemon.live.messages.GameResult` once, when the result becomes final;
* one :class:`~livemon.live.messages.FeedError` per bad game (repeats of the same
  error for the same game are not re-sent);
* a :class:`~livemon.live.messages.FeedNotice` for what is worth a log line but
  is no fault (DGT king moves dropped, a Site URL shared by several games, a
  result changed after it was final…): the tracker logs nothing itself, whoever
  reads the feed logs its notices (the monitor's core turns them into log lines).

Snapshots are *complete* (the whole game as the source knows it now: it ended
in a result or ``*``, or another game followed it) or *incomplete* (the tail
of a half-written file or a cut response). An incomplete snapshot can only
add plies to a game already known, its last ply is not trusted (it may be cut
mid-token or mid-comment), and it never rolls anything back: a shorter or
different move list in it means "not written yet", not "corrected".

Identity (:func:`default_game_key`): ``GameURL`` if it is a URL, else ``Site``
if it is a URL that no other game uses, else ``Event|Round|White|Black``.

Withdrawals: a feed whose every read is the whole current view of a round
(a PGN file or DGT folder rewritten in place, an HTTP poll of a round's PGN)
names the view when it hands over a text (``update_text(..., view=...)``) and
calls :meth:`GameTracker.poll_done` after each whole read. A game the view
listed before and no longer lists is withdrawn (:class:`GameWithdrawn`) once
it was missing from :data:`WITHDRAW_READS` whole reads in a row spanning
``withdraw_after`` seconds. A read whose text was cut (its last game not
terminated: the round is being rewritten) or could not be read is no
evidence and starts the count again; a read that shares no
game with the previous one (an emptied file, a new round at the same URL) is
taken as a new view: nothing is withdrawn and the games before it are no
longer the view's. The same key twice in one text is one game listed twice
unless every listing of it is finished (an archive of a match: ``#2``,
``#3``…): the finished listing wins, else the longer, else the later, with
one :class:`FeedError` (the first time).

Reading: every PGN text is read by :mod:`livemon.live.reader` (python-chess's parser and one visitor):
a game's text read from its start (:func:`parse_chunk`), or -- a game that only gained moves since the
text last applied to it -- resumed from its last ply on the board the tracker holds, so that a growing
game costs its new moves per poll. The reader applies the DGT end-of-game king rule (the king moves are
dropped with a :class:`FeedNotice`). A move read from PGN is read on the board before it, which is the
feed's legality decision: the tracker does not check those plies again. A ply list given as UCI moves
(:meth:`GameTracker.update` with a :class:`Snapshot` not made by the reader, the MQTT feed's) is read
move by move on the tracker's board before anything changes. The core checks each
:class:`~livemon.live.messages.MoveEvent` against its own game once more as it arrives, because messages
reach it from other processes too (the bus); a move a tracker emitted never fails that check.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Mapping, Sequence

import chess
import chess.pgn

from livemon.live.fields import sane_eval
from livemon.live.messages import (
    FeedError,
    FeedNotice,
    GameResult,
    GameRollback,
    GameWithdrawn,
    Message,
    MoveEvent,
)
from livemon.live.movetext import balanced, is_terminated, tag_head
from livemon.live.pgn import FINAL_RESULTS, chunk_headers, game_info, parse_result
from livemon.live.reader import Ply as Ply
from livemon.live.reader import read_from, read_pgn, resume_point
from livemon.live.splitter import split_games
from livemon.live.values import fast_fen

_URL = re.compile(r"^https?://\S+$", re.I)

WITHDRAW_READS = 3
"""Whole reads of a round in a row that must miss a game before it is withdrawn (with ``withdraw_after`` seconds)."""


@dataclass
class Snapshot:
    """What a source currently says about one game."""

    headers: Mapping[str, str]
    plies: list[Ply]
    complete: bool = True
    fen: str | None = None  # starting position when not the standard one
    chess960: bool = False
    settled: bool = False  # incomplete but unchanged for a poll: may create the game, still never rolls back
    start_eval: int | None = None  # the [%eval] before the first move (White's view), if any
    note: str | None = None  # what reading it changed that is worth saying (DGT king moves dropped)
    read: bool = False  # its plies were read on a board from its start (the reader's): legal there, not re-checked
    resume_at: int | None = None  # where its text may be cut to be resumed (reader.resume_point); None: it may not
    sans: int = 0  # SAN tokens parsed to read it (the reader's work)
    written: Sequence[tuple[str, str]] = ()  # read: each ply's SAN and FEN before it from written_from on
    written_from: int = 0  # (Read.written, Read.written_from)
    end: chess.Board | None = None  # read: the board after all its plies (the reader's own, handed over)


@dataclass
class BadSnapshot:
    """A game that could not be read; ``headers`` are what was readable."""

    headers: Mapping[str, str]
    error: str


KeyFunc = Callable[[Mapping[str, str]], str]


def is_url(value: str | None) -> bool:
    return bool(value) and bool(_URL.match(value.strip()))  # type: ignore[union-attr]


def tags_key(headers: Mapping[str, str]) -> str:
    """``Event|Round|White|Black``: the fallback identity of a game."""
    return "|".join(headers.get(t, "?") or "?" for t in ("Event", "Round", "White", "Black"))


def default_game_key(headers: Mapping[str, str]) -> str:
    """GameURL, else a URL Site, else Event|Round|White|Black (no uniqueness check)."""
    for tag in ("GameURL", "Site"):
        if is_url(headers.get(tag)):
            return headers[tag].strip()
    return tags_key(headers)


def snapshot_of_game(game: chess.pgn.Game, complete: bool = True) -> Snapshot:
    """A python-chess game (no errors) as a snapshot: its PGN read by :func:`parse_chunk` (the one reader)."""
    snap = parse_chunk(str(game), complete)
    assert isinstance(snap, Snapshot), snap  # noqa: S101 - a game python-chess built reads back whole
    return snap


def parse_chunk(chunk: str, complete: bool | None = None, label: str = "",
                write_from: int = 0) -> Snapshot | BadSnapshot | None:
    """One game's PGN text (a chunk from :func:`split_games`) read by :func:`~livemon.live.reader.read_pgn`.

    ``complete`` None means: complete iff the text ends in a result or ``*``. Returns None for text with no
    game in it; DGT end-of-game king moves are dropped with a :attr:`Snapshot.note`.
    """
    if complete is None:
        complete = is_terminated(chunk)
    read = read_pgn(chunk, write_from)
    if read is None:
        return None
    headers = dict(read.headers)
    if read.error is not None:
        if not read.headers:
            return BadSnapshot({}, f"{label}{read.error}")
        who = f"{headers.get('White', '?')} - {headers.get('Black', '?')}"
        return BadSnapshot(headers, f"{label}{who}, round {headers.get('Round', '?')}: {read.error}")
    board = read.start
    fen = board.fen() if board.fen() != chess.STARTING_FEN or board.chess960 else None
    snap = Snapshot(headers, read.plies, complete, fen, board.chess960, start_eval=sane_eval(read.start_eval),
                    read=True, resume_at=resume_point(chunk) if read.resumable else None, sans=read.sans,
                    written=read.written, written_from=read.written_from, end=read.end)
    if read.dropped:
        snap.note = (f"dropping DGT end-of-game king move(s) {' '.join(read.dropped)} in {headers.get('White', '?')} - "
                     f"{headers.get('Black', '?')} (illegal after {len(snap.plies)} plies)")
    return snap


@dataclass(frozen=True)
class Tail:
    """The text of a game last applied, cut where it may be resumed (``core``), and its plies."""

    core: str
    plies: int


class GameTracker:
    """Turns snapshots of games into new messages; one per feed.

    ``key`` maps a game's tags to its identity (default: see module doc);
    passing one disables the shared-Site check.

    A complete game whose text is the text last applied to it plus new moves
    (the common case live: one more move) is read by resuming the reader at
    its last ply on the board the tracker holds (``append_only``): only the
    new SAN tokens are parsed. Anything else is read whole. Both give the
    same messages.
    """

    def __init__(self, feed: str = "", key: KeyFunc | None = None, withdraw_after: float | None = 10.0,
                 append_only: bool = True) -> None:
        self.feed = feed
        self.append_only = append_only
        """A changed game that only gained moves is read by parsing its new moves only (False: always whole)."""
        self.withdraw_after = withdraw_after
        """Seconds a game must be missing from whole reads of its round before it is withdrawn; None: never."""
        self._listings: dict[str, frozenset[str] | None] = {}  # view -> ids of its last text (None: cut or unread)
        self._last_listed: frozenset[str] = frozenset()
        self._owned: set[str] = set()  # games listed since the view was last replaced wholesale
        self._absent: dict[str, tuple[int, float]] = {}  # game id -> (whole reads missing it in a row, since)
        self._duplicates: set[str] = set()  # keys reported as listed twice (once each)
        self._custom_key = key
        self._games: dict[str, _GameState] = {}
        self._plies = 0  # the sum of the games' plies, kept as they change
        self._finished = 0  # games of _games with a result
        self._url_owner: dict[str, str] = {}  # Site URL -> tags key of the first game using it
        self._shared_urls: set[str] = set()
        self._alias: dict[str, str] = {}  # tags key -> game id given before the Site was found shared
        self._errors: dict[str, str] = {}  # game id -> last error sent
        self._applied: dict[str, str] = {}  # game id -> digest of the last whole chunk applied
        self._digest_gid: dict[str, str] = {}
        self._tag_memo: dict[str, chess.pgn.Headers] = {}  # a chunk's tag block -> its tags (_headers_of)
        self._tails: dict[str, Tail] = {}  # game id -> the last chunk applied, when the next may only append to it
        self._notices: list[Message] = []  # FeedNotices not yet returned (handed out by the next update)
        self._undated_said = False  # a game whose tags had no usable date was said (once a feed, not once a game)
        self.fast_applied = 0
        """Changed chunks read by resuming from the game's last ply (only their new moves parsed)."""
        self.parsed = 0
        """Chunks read whole (from the game's start: every SAN parsed)."""
        self.sans_read = 0
        """SAN tokens parsed, whole reads and resumed ones: the reading work done."""

    # ------------------------------------------------------------------ state
    @property
    def games(self) -> int:
        return len(self._games)

    @property
    def plies(self) -> int:
        """Moves emitted of the games still tracked (a running count: the status reads it every chunk)."""
        return self._plies

    def moves(self, game_id: str) -> list[str]:
        """The UCI moves of a game as emitted so far (empty if unknown)."""
        g = self._games.get(game_id)
        return g.moves() if g else []

    def result(self, game_id: str) -> str | None:
        g = self._games.get(game_id)
        return g.result if g else None

    def game_ids(self) -> list[str]:
        return list(self._games)

    # --------------------------------------------------------------- identity
    def key_of(self, headers: Mapping[str, str], register: bool = True) -> str:
        """The game id for these tags, remembering Site URLs that turn out shared.

        ``register`` False (tags of a cut game, maybe cut themselves): look up only. A Site found shared
        is said by a :class:`FeedNotice` that the next update returns.
        """
        if self._custom_key is not None:
            return self._custom_key(headers)
        url = headers.get("GameURL", "")
        if is_url(url):
            return url.strip()
        tk = tags_key(headers)
        site = (headers.get("Site") or "").strip()
        if is_url(site) and site not in self._shared_urls:
            owner = self._url_owner.get(site)
            if owner is None and not register:
                return site
            if owner is None:
                owner = self._url_owner[site] = tk
            if owner == tk:
                self._alias.setdefault(tk, site)
                return site
            if register:
                self._notice(f"Site {site} is used by more than one game; telling games apart by tags")
                self._shared_urls.add(site)
        return self._alias.get(tk, tk)

    # ----------------------------------------------------------------- inputs
    def update_text(self, text: str, source: str = "", final: bool = True, settled: bool = False,
                    view: str | None = None) -> list[Message]:
        """All games of a multi-game PGN text.

        ``final`` False means the text may be cut at the end (a file being
        written): its last game counts as incomplete unless it is terminated.
        ``settled`` True says the same text was seen again a poll later (the
        writer is done, the last game just lacks a result or ``*``): that game
        may then be created, and its last ply used if the text ends in
        whitespace outside a comment; it still never rolls anything back.
        ``view`` names the file or URL the text is the whole of: its games are
        listed for :meth:`poll_done` (a cut text lists nothing).
        """
        chunks = list(split_games(text))
        headers = self._headers_of([chunk for chunk, _ in chunks], fresh=True)
        # a Site URL shared within one text is not an identity
        if self._custom_key is None:
            whole = len(chunks) if final or not chunks or is_terminated(chunks[-1][0]) else len(chunks) - 1
            self._note_shared_sites(headers[:whole])
        completes = [final or i < len(chunks) - 1 or is_terminated(chunk) for i, (chunk, _) in enumerate(chunks)]
        gids = [self.key_of(h, register=c) for h, c in zip(headers, completes)]
        gids, skipped, out = self._one_per_key(chunks, headers, gids, source)
        for i, (chunk, _sep) in enumerate(chunks):
            if i in skipped:
                continue
            last = i == len(chunks) - 1
            tail_ok = settled and last and text[-1:].isspace() and balanced(chunk)
            out.extend(self._apply_chunk(chunk, completes[i], gids[i], f"{source} game {i + 1}: " if source else "",
                                         settled=settled and last, tail_ok=tail_ok))
        if view is not None:
            self._listings[view] = frozenset(gids) if not chunks or completes[-1] else None
        return self._said(out)

    def _one_per_key(self, chunks: Sequence[tuple[str, bool]], headers: Sequence[Mapping[str, str]],
                     gids: list[str], source: str) -> tuple[list[str], set[int], list[Message]]:
        """The same key twice in one text: ``#2``, ``#3``… when every listing is finished (an archive of a
        match), else one game listed twice: one listing is used (finished, else longer, else later) and the
        others skipped, with one FeedError per key (the first time). Returns the ids, the chunks skipped, the errors.
        """
        at: dict[str, list[int]] = {}
        for i, gid in enumerate(gids):
            at.setdefault(gid, []).append(i)
        ids, skipped, out = list(gids), set[int](), list[Message]()
        for gid, where in at.items():
            if len(where) == 1:
                continue
            finished = [parse_result(headers[i].get("Result")) in FINAL_RESULTS for i in where]
            if all(finished):
                for n, i in enumerate(where[1:], 2):
                    ids[i] = f"{gid}#{n}"
                continue
            plies = [_plies_listed(chunks[i][0]) for i in where]
            best = max(range(len(where)), key=lambda k: (finished[k], plies[k], k))
            skipped.update(i for k, i in enumerate(where) if k != best)
            if gid not in self._duplicates:
                self._duplicates.add(gid)
                others = [k for k in range(len(where)) if k != best]
                which = ("finished" if finished[best] and not all(finished[k] for k in others)
                         else "longest" if all(plies[k] < plies[best] for k in others) else "last")
                out.append(FeedError(self.feed, (
                    f"{source + ': ' if source else ''}game {gid} is listed {len(where)} times "
                    f"({', '.join(map(str, plies))} plies); one game: the {which} listing is used"), gid))
        return ids, skipped, out

    def update_chunk(self, chunk: str, complete: bool | None = True, label: str = "") -> list[Message]:
        """One game's PGN text; ``complete`` None: decide from its terminator."""
        if complete is None:
            complete = is_terminated(chunk)
        unfinished = len(self._games) - self._finished
        headers = self._headers_of([chunk], fresh=len(self._tag_memo) > 2 * unfinished + 100)[0]
        return self._said(self._apply_chunk(chunk, complete, self.key_of(headers, register=complete), label))

    def _headers_of(self, chunks: Sequence[str], fresh: bool) -> list[chess.pgn.Headers]:
        """The tags of each chunk, as :func:`~livemon.live.pgn.chunk_headers` reads them, read once per tag block.

        A round re-sent every poll repeats its games' tags: each distinct tag block is parsed once and
        remembered (``fresh``: only those of these chunks are kept, so the memory is one round's). The
        returned headers are shared: read them, do not change them.
        """
        memo = self._tag_memo
        kept: dict[str, chess.pgn.Headers] = {}
        out = []
        for chunk in chunks:
            head = tag_head(chunk)
            if head is None:  # a line break other than \n near the top: the careful way
                out.append(chunk_headers(chunk))
                continue
            found = kept.get(head) or memo.get(head)
            if found is None:
                found = chunk_headers(head)  # the same tags: the head is the chunk's whole tag block
            kept[head] = found
            out.append(found)
        if fresh:
            self._tag_memo = kept
        else:
            memo.update(kept)
        return out

    def _apply_chunk(self, chunk: str, complete: bool, gid: str, label: str,
                     settled: bool = False, tail_ok: bool = False) -> list[Message]:
        """Parse and apply one chunk, unless it is the one last applied to ``gid``.

        Feeds re-send whole files every poll: an unchanged game costs a hash, not a parse.
        """
        digest = text_digest(chunk) if complete else ""
        if complete:
            seen_gid = self._digest_gid.get(digest)
            if seen_gid is not None and self._applied.get(seen_gid) == digest:
                return []
        fast = self._append_only(chunk, gid) if complete and self.append_only and gid in self._tails else None
        if fast is not None:
            out = fast
        else:
            out = self._parse_and_apply(chunk, complete, gid, label, settled, tail_ok)
        if complete:
            old = self._applied.get(gid)
            if old is not None and old != digest:
                self._digest_gid.pop(old, None)
            self._applied[gid] = digest
            self._digest_gid[digest] = gid
        return out

    def _parse_and_apply(self, chunk: str, complete: bool, gid: str, label: str, settled: bool,
                         tail_ok: bool) -> list[Message]:
        """The whole chunk read from the game's start (every SAN parsed) and diffed against what was sent."""
        self.parsed += 1
        known = self._games.get(gid)  # the plies sent already need no SAN or FEN written
        parsed = parse_chunk(chunk, complete, label, known.plies if known is not None else 0)
        if parsed is None:
            return []
        if isinstance(parsed, BadSnapshot):
            if not complete:
                return []  # the rest of the game is not written yet: its complete text says whether it is wrong
            self._tails.pop(gid, None)
            return self._error(gid, parsed.error)
        self.sans_read += parsed.sans
        if not complete and settled:
            parsed.settled = True
            if not tail_ok:
                parsed.plies = parsed.plies[:-1]
        if parsed.note is not None:
            self._notice(f"{label}{parsed.note}", gid)
        out = self._update(parsed, gid)
        if complete:
            self._note_tail(chunk, gid, parsed)
        return out

    def _note_tail(self, chunk: str, gid: str, snap: Snapshot) -> None:
        """Remember a complete chunk that was applied whole, if the next version may be read by resuming it.

        The reader says where (:attr:`Snapshot.resume_at`: the text ended in ``*`` at the top level of a clean
        main line); the game must have no final result in its tags, and its moves must be exactly the ones
        read (not a cut-down or rejected snapshot).
        """
        state = self._games.get(gid)
        if (snap.resume_at is None or state is None or state.result is not None
                or parse_result(snap.headers.get("Result")) in FINAL_RESULTS
                or len(state.ucis) != len(snap.plies) or state.ucis != [p.uci for p in snap.plies]):
            return
        self._tails[gid] = Tail(chunk[: snap.resume_at], len(state.ucis))

    def _append_only(self, chunk: str, gid: str) -> list[Message] | None:
        """The resumed read: ``chunk`` is the last applied chunk of ``gid`` with text appended after its
        resume point; None: it is not, or the appended text is no clean run of new moves.

        The appended text is read by :func:`~livemon.live.reader.read_from` on the board the tracker holds
        (the board at ply N): the work is the new moves', and the messages are those :meth:`update` gives
        for the whole chunk read from its start. Anything else (tags or earlier moves changed, a result, an
        illegal or unreadable move) is read whole.
        """
        tail = self._tails[gid]
        state = self._games.get(gid)
        if (state is None or state.result is not None or not tail.plies or len(state.ucis) != tail.plies
                or not chunk.startswith(tail.core) or len(chunk) == len(tail.core)
                or not chunk[len(tail.core)].isspace()):
            return None
        suffix = chunk[len(tail.core):]
        held = state.board if state.board is not None else state.board_at(tail.plies)  # only read, never changed
        read = read_from(suffix, held)
        self.sans_read += read.sans
        if read.error is not None or read.dropped or not read.plies or not read.resumable or read.end is None:
            return None  # the whole read says what is wrong (or drops DGT kings), or where to resume next
        new = self._written_events(gid, read.plies, read.written, 0, None, tail.plies)
        state.extend([m.uci for m in new], read.end)
        self._plies += len(new)
        self._errors.pop(gid, None)
        self._tails[gid] = Tail(tail.core + suffix[: resume_point(suffix)], len(state.ucis))
        self.fast_applied += 1
        return list(new)

    def _written_events(self, gid: str, plies: Sequence[Ply], written: Sequence[tuple[str, str]], first: int,
                        start_eval: int | None, before: int = 0, written_from: int = 0) -> list[MoveEvent]:
        """The MoveEvents of ``plies[first:]`` from the reader's ``written`` SANs and FENs (of ``plies`` from
        ``written_from`` on; the game's ply ``before`` + 1 is ``plies[0]``); ``start_eval`` goes with the game's
        first ply."""
        new: list[MoveEvent] = []
        for i in range(first, len(plies)):
            ply, (san, fen) = plies[i], written[i - written_from]
            cp = sane_eval(ply.eval_cp)
            n = before + i
            new.append(MoveEvent(gid, n + 1, ply.uci, san, fen, ply.clock, ply.emt, cp, self.feed,
                                 start_eval if n == 0 else None, ply.eval_mate if cp is not None else None))
        return new

    def _events(self, gid: str, board: chess.Board, plies: Sequence[Ply], before: int,
                start_eval: int | None = None) -> list[MoveEvent]:
        """The MoveEvents of ``plies`` (legal on ``board``, the board after ply ``before``), pushed on ``board``:
        plies the reader did not write (a source's UCI moves, a read from another start)."""
        written = []
        for ply in plies:
            move = chess.Move.from_uci(ply.uci)
            written.append((board.san(move), fast_fen(board)))
            board.push(move)
        return self._written_events(gid, plies, written, 0, start_eval, before)

    def update(self, snap: Snapshot, game_id: str | None = None) -> list[Message]:
        """The core: diff a snapshot against what was emitted (with the notices not yet returned)."""
        return self._said(self._update(snap, game_id))

    def _update(self, snap: Snapshot, game_id: str | None = None) -> list[Message]:
        gid = game_id if game_id is not None else self.key_of(snap.headers)
        self._tails.pop(gid, None)  # whoever changes a game otherwise says again whether it may be appended to
        state = self._games.get(gid)
        plies = snap.plies if snap.complete or snap.settled else snap.plies[:-1]
        if state is None:
            if not snap.complete and not (snap.settled and plies):
                return []  # tags of a cut game may be cut too: wait for it whole (or settled, with moves)
            try:
                start = chess.Board(snap.fen, chess960=snap.chess960) if snap.fen else _STANDARD_START
            except ValueError as exc:
                return self._error(gid, f"{gid}: bad FEN tag ({exc})")
            state = _GameState(start)
        ucis = [p.uci for p in plies]
        known = state.ucis
        p = 0
        limit = min(len(known), len(ucis))
        while p < limit and known[p] == ucis[p]:
            p += 1
        out: list[Message] = []
        rollback = p < len(known)
        if rollback and not snap.complete:
            return []  # a cut or half-written game: not a correction
        # a ply list of UCI moves (not read from PGN on this start) is read on the board before anything changes
        if (snap.read and _same_start(state.start, snap) and snap.written_from <= p
                and snap.written_from + len(snap.written) == len(snap.plies)):
            # read from this start by the reader, which wrote each ply's SAN and FEN: nothing to replay
            board = (snap.end if snap.end is not None and len(plies) == len(snap.plies)
                     else _pushed(state.board_at(p), plies[p:]))
            new = self._written_events(gid, plies, snap.written, p, snap.start_eval, 0, snap.written_from)
        else:
            board = state.board_at(p)
            if not (snap.read and _same_start(state.start, snap)):
                bad = _unreadable(board.copy(stack=False), plies, p)
                if bad is not None:
                    return self._error(gid, f"{gid}: {bad}")
            new = self._events(gid, board, plies[p:], p, snap.start_eval)
        if gid not in self._games:
            self._games[gid] = state
            info = game_info(snap.headers, gid)
            if info.rating_note and not info.rating_date_source:  # no date at all: a feed's habit, said once
                if not self._undated_said:
                    self._notice(f"{gid}: {info.rating_note} (said once: this feed's other undated games are read "
                                 "the same way)", gid, "warning")
                    self._undated_said = True
            elif info.rating_note:
                self._notice(f"{gid}: {info.rating_note}", gid, "warning")
            out.append(info)
        if rollback:
            if state.result is not None:
                self._notice(f"{gid}: moves before a result were corrected; the result stands", gid)
            out.append(GameRollback(gid, p + 1, self.feed))
            self._plies -= len(known) - p  # (known is the game's own list: counted before it is cut)
            state.truncate(p)
        if new:
            state.extend([m.uci for m in new], board)
            self._plies += len(new)
            out.extend(new)
        self._errors.pop(gid, None)
        res = parse_result(snap.headers.get("Result")) or "*"
        if snap.complete and res in FINAL_RESULTS:
            if state.result is None:
                state.result = res
                self._finished += 1
                out.append(GameResult(gid, res, len(state.ucis), self.feed))
            elif state.result != res:
                self._notice(f"{gid}: result changed from {state.result} to {res}; keeping the first", gid, "warning")
        if state.result is not None:
            state.pack()
        return out

    def error(self, game_id: str, message: str) -> list[Message]:
        """A FeedError for a game, unless the same one was the last sent for it."""
        return self._said(self._error(game_id, message))

    # ------------------------------------------------------------- withdrawals
    def unlisted(self, view: str) -> None:
        """A part of the view could not be read this time: the read counts for nothing."""
        self._listings[view] = None

    def poll_done(self, views: Sequence[str], now: float) -> list[Message]:
        r"""One whole read of the feed's round is over (``views``: the files or URL it is made of; ``now``:
        a monotonic clock): :class:`GameWithdrawn` for each game of the view missing long enough.

        >>> t = GameTracker("hall", withdraw_after=0.0)
        >>> round_ = '[White "A"]\n[Black "B"]\n\n1. e4 *\n\n[White "C"]\n[Black "D"]\n\n1. d4 *\n'
        >>> _ = t.update_text(round_, view="r.pgn"); t.poll_done(["r.pgn"], 0.0)
        []
        >>> _ = t.update_text(round_.replace('"D"', '"Dee"'), view="r.pgn")  # a name corrected
        >>> [t.poll_done(["r.pgn"], s) for s in (1.0, 2.0)]
        [[], []]
        >>> [(m.game_id, m.reason) for m in t.poll_done(["r.pgn"], 3.0)]
        [('?|?|C|D', 'no longer listed (3 whole reads in a row, over 2 s)')]
        >>> t.game_ids()
        ['?|?|A|B', '?|?|C|Dee']
        """
        return self._said(self._poll_done(views, now))

    def _poll_done(self, views: Sequence[str], now: float) -> list[Message]:
        if self.withdraw_after is None or not views:
            return []
        listings = [self._listings.get(v) for v in views]
        if any(x is None for x in listings):
            self._absent.clear()  # cut (being rewritten), unread or never read: no evidence, and the count restarts
            return []
        listed = frozenset().union(*listings)  # type: ignore[arg-type]
        previous, self._last_listed = self._last_listed, listed
        if previous and not listed & previous:
            self._notice(f"its round now lists none of the {len(previous)} games it listed before ({len(listed)} now): "
                         "a new view, nothing withdrawn")
            self._owned = set(listed)
            self._absent.clear()
            return []
        self._owned |= listed
        for gid in [g for g in self._absent if g in listed or g not in self._games]:
            del self._absent[gid]
        out: list[Message] = []
        for gid in [g for g in self._games if g not in listed and g in self._owned]:
            reads, since = self._absent.get(gid, (0, now))
            self._absent[gid] = (reads + 1, since)
            if reads + 1 >= WITHDRAW_READS and now - since >= self.withdraw_after:
                out.append(GameWithdrawn(gid, f"no longer listed ({reads + 1} whole reads in a row, over "
                                              f"{now - since:.0f} s)", self.feed))
                self._forget(gid)
        return out

    def _forget(self, gid: str) -> None:
        gone = self._games.pop(gid, None)
        if gone is not None:
            self._plies -= gone.plies
        if gone is not None and gone.result is not None:
            self._finished -= 1
        self._tails.pop(gid, None)
        self._errors.pop(gid, None)
        self._absent.pop(gid, None)
        self._owned.discard(gid)
        digest = self._applied.pop(gid, None)
        if digest is not None and self._digest_gid.get(digest) == gid:
            del self._digest_gid[digest]

    # -------------------------------------------------------------- internals
    def _notice(self, message: str, gid: str | None = None, level: Literal["info", "warning"] = "info") -> None:
        """A :class:`FeedNotice`, returned by the next update (or poll) with its messages."""
        self._notices.append(FeedNotice(self.feed, message, gid, level))

    def _said(self, out: list[Message]) -> list[Message]:
        """``out`` and, after it, the notices not yet returned."""
        if not self._notices:
            return out
        out = [*out, *self._notices]
        self._notices.clear()
        return out

    def _error(self, gid: str, message: str) -> list[Message]:
        if self._errors.get(gid) == message:
            return []
        self._errors[gid] = message
        return [FeedError(self.feed, message, gid)]

    def _note_shared_sites(self, all_headers: Sequence[Mapping[str, str]]) -> None:
        seen: dict[str, str] = {}
        for headers in all_headers:
            site = (headers.get("Site") or "").strip()
            if not is_url(site) or is_url(headers.get("GameURL")):
                continue
            tk = tags_key(headers)
            if seen.setdefault(site, tk) != tk and site not in self._shared_urls:
                self._notice(f"Site {site} is used by more than one game; telling games apart by tags")
                self._shared_urls.add(site)


class _GameState:
    """What was emitted for one game: its moves and the board after them.

    A finished game is packed (:meth:`pack`): its moves as one string, no board (a round of a long
    event lists every game it has played: a list of move strings and a board each was ~5 KB a game,
    the feeds' share of the memory growing with finished games); reading ``ucis`` unpacks it (a
    correction after the result).
    """

    __slots__ = ("start", "_ucis", "_packed", "board", "result")

    def __init__(self, start: chess.Board) -> None:
        self.start = start  # never changed (shared by standard games): boards are made from a copy
        self._ucis: list[str] | None = []
        self._packed = ""
        self.board: chess.Board | None = None
        self.result: str | None = None

    @property
    def ucis(self) -> list[str]:
        if self._ucis is None:
            self._ucis = self._packed.split()
            self._packed = ""
        return self._ucis

    @property
    def plies(self) -> int:
        """The number of moves, packed or not."""
        if self._ucis is not None:
            return len(self._ucis)
        return self._packed.count(" ") + 1 if self._packed else 0

    def moves(self) -> list[str]:
        """A copy of the moves (a packed game stays packed)."""
        return list(self._ucis) if self._ucis is not None else self._packed.split()

    def pack(self) -> None:
        if self._ucis is not None:
            self._packed = " ".join(self._ucis)
            self._ucis = None
            self.board = None

    def board_at(self, n: int) -> chess.Board:
        if n == self.plies and self.board is not None:
            return self.board.copy(stack=False)
        b = self.start.copy(stack=False)
        for u in self.ucis[:n]:
            b.push(chess.Move.from_uci(u))
        return b

    def truncate(self, n: int) -> None:
        del self.ucis[n:]
        self.board = None

    def extend(self, ucis: Iterable[str], board: chess.Board) -> None:
        self.ucis.extend(ucis)
        self.board = board


def _plies_listed(chunk: str) -> int:
    """The plies one listing of a game reads to (DGT king moves included)."""
    read = read_pgn(chunk)
    return 0 if read is None else len(read.plies) + len(read.dropped)


def _same_start(start: chess.Board, snap: Snapshot) -> bool:
    """The snapshot's plies were read from the start the tracker holds for its game."""
    if snap.fen is None:
        return start is _STANDARD_START
    return not start.move_stack and start.chess960 == snap.chess960 and start.fen() == snap.fen


def _pushed(board: chess.Board, plies: Sequence[Ply]) -> chess.Board:
    """``board`` with ``plies`` (legal there) played on it."""
    for ply in plies:
        board.push(chess.Move.from_uci(ply.uci))
    return board


def _unreadable(board: chess.Board, plies: Sequence[Ply], before: int) -> str | None:
    """Why a ply of ``plies`` (from ply ``before`` + 1 on ``board``) is no move there, or None when all are."""
    for i, ply in enumerate(plies[before:], before):
        try:
            move = chess.Move.from_uci(ply.uci)
        except ValueError:
            move = None
        if move is None or not board.is_legal(move):
            return f"illegal move {ply.uci!r} at ply {i + 1} in {board.fen()}"
        board.push(move)
    return None


_STANDARD_START = chess.Board()
"""The start of every game without a FEN tag (shared: :class:`_GameState` never changes its start)."""


def text_digest(text: str) -> str:
    """A short digest of a game's text: an unchanged game costs a hash, not a parse."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
